// Upsert of a validated batch into the work store's `posts`. A uuid seen before keeps its content
// (the first version wins: edits are not part of the input contract) and takes the engagement
// counts of its latest observation; within a batch the same rule applies record by record.
import type { DuckDB } from '../../core/duckdb.ts';
import { num } from '../../core/duckdb.ts';

export interface MergeCounts {
  /** Valid records whose uuid was new: one post each. */
  accepted: number;
  /** Valid records for a uuid already known (stored earlier, or earlier in this file). */
  updated: number;
  /** Stored posts whose counts changed because of this batch. */
  countsChanged: number;
}

const CONTENT = `uuid, platform, content_type, creator_id, creator_handle, title, description, tags,
  published_at, content_url, media, language, text_embedding, visual_embedding`;

export async function mergeValid(db: DuckDB, sourceSha: string, ingestedAt: string): Promise<MergeCounts> {
  await db.run(`CREATE OR REPLACE TEMP TABLE valid AS
    SELECT *, coalesce(observed_at, ?::TIMESTAMPTZ) AS obs FROM checked2 WHERE len(reasons) = 0`, [ingestedAt]);
  await db.run(`CREATE OR REPLACE TEMP TABLE firsts AS
    SELECT ${CONTENT}, rec FROM valid QUALIFY row_number() OVER (PARTITION BY uuid ORDER BY rec) = 1`);
  await db.run(`CREATE OR REPLACE TEMP TABLE latest AS
    SELECT uuid, like_count, comment_count, share_count, view_count, follower_count, obs FROM valid
    QUALIFY row_number() OVER (PARTITION BY uuid ORDER BY obs DESC, rec DESC) = 1`);
  await db.run(`CREATE OR REPLACE TEMP TABLE new_uuids AS
    SELECT uuid FROM firsts f WHERE NOT EXISTS (SELECT 1 FROM posts p WHERE p.uuid = f.uuid)`);

  // Counted before the update: DuckDB has no UPDATE ... RETURNING inside a CTE, and returning
  // every updated row to JS only to count it would be wasteful.
  const changed = await db.all<{ n: number }>(
    `SELECT count(*) AS n FROM posts p JOIN latest l USING (uuid) WHERE l.obs >= p.observed_at`,
  );
  await db.run(`UPDATE posts SET like_count = l.like_count, comment_count = l.comment_count, share_count = l.share_count,
      view_count = l.view_count, follower_count = coalesce(l.follower_count, posts.follower_count),
      observed_at = l.obs, updated_at = ?::TIMESTAMPTZ
    FROM latest l WHERE posts.uuid = l.uuid AND l.obs >= posts.observed_at`, [ingestedAt]);

  await db.run(`INSERT INTO posts BY NAME
    SELECT f.* EXCLUDE (rec), l.like_count, l.comment_count, l.share_count, l.view_count, l.follower_count,
      l.obs AS observed_at, ? AS source_sha256, f.rec AS source_record,
      ?::TIMESTAMPTZ AS first_ingested_at, ?::TIMESTAMPTZ AS updated_at
    FROM firsts f JOIN latest l USING (uuid) SEMI JOIN new_uuids n USING (uuid)`, [sourceSha, ingestedAt, ingestedAt]);

  const [totals] = await db.all<{ valid: number; fresh: number }>(
    `SELECT (SELECT count(*) FROM valid) AS valid, (SELECT count(*) FROM new_uuids) AS fresh`,
  );
  const accepted = num(totals?.fresh);
  return { accepted, updated: num(totals?.valid) - accepted, countsChanged: num(changed[0]?.n) };
}
