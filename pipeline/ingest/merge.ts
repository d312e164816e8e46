// Upsert of a validated batch into the work store's `posts`. A uuid seen before keeps its content
// (the first version wins: edits are not part of the input contract) and takes the engagement
// counts of its latest observation; within a batch the same rule applies record by record.
// The common cases (no repeated uuid in the batch; no uuid already stored) skip the window
// functions and the update, which would otherwise copy every row of a bulk load twice more.
import type { DuckDB } from '../../core/duckdb.ts';
import { num, sqlString } from '../../core/duckdb.ts';

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
const COUNTS = `like_count, comment_count, share_count, view_count, follower_count`;

export async function mergeValid(db: DuckDB, sourceSha: string, ingestedAt: string): Promise<MergeCounts> {
  // Views take no parameters; ingestedAt is our own ISO timestamp, quoted as a literal.
  await db.run(`CREATE OR REPLACE TEMP VIEW valid AS
    SELECT *, coalesce(observed_at, ${sqlString(ingestedAt)}::TIMESTAMPTZ) AS obs FROM checked2 WHERE len(reasons) = 0`);
  const [v] = await db.all(`SELECT count(*) AS n, count(DISTINCT uuid) AS distinct_n FROM valid`);
  const validN = num(v?.n);
  if (num(v?.distinct_n) === validN) {
    await db.run(`CREATE OR REPLACE TEMP VIEW batch AS SELECT ${CONTENT}, ${COUNTS}, obs, rec FROM valid`);
  } else {
    await db.run(`CREATE OR REPLACE TEMP TABLE batch AS
      SELECT f.*, l.* EXCLUDE (uuid) FROM
        (SELECT ${CONTENT}, rec FROM valid QUALIFY row_number() OVER (PARTITION BY uuid ORDER BY rec) = 1) f
      JOIN (SELECT uuid, ${COUNTS}, obs FROM valid QUALIFY row_number() OVER (PARTITION BY uuid ORDER BY obs DESC, rec DESC) = 1) l
      USING (uuid)`);
  }
  const [e] = await db.all(`SELECT count(*) AS n, count(*) FILTER (WHERE b.obs >= p.observed_at) AS newer
    FROM batch b JOIN posts p USING (uuid)`);
  const existing = num(e?.n);
  const insertCols = `${CONTENT}, ${COUNTS}, observed_at, source_sha256, source_record, first_ingested_at, updated_at`;
  const insertSelect = `SELECT ${CONTENT}, ${COUNTS}, obs, ?, rec, ?::TIMESTAMPTZ, ?::TIMESTAMPTZ FROM batch`;
  if (existing === 0) {
    await db.run(`INSERT INTO posts (${insertCols}) ${insertSelect}`, [sourceSha, ingestedAt, ingestedAt]);
  } else {
    await db.run(`UPDATE posts SET like_count = b.like_count, comment_count = b.comment_count, share_count = b.share_count,
        view_count = b.view_count, follower_count = coalesce(b.follower_count, posts.follower_count),
        observed_at = b.obs, updated_at = ?::TIMESTAMPTZ
      FROM batch b WHERE posts.uuid = b.uuid AND b.obs >= posts.observed_at`, [ingestedAt]);
    await db.run(`INSERT INTO posts (${insertCols}) ${insertSelect} b WHERE NOT EXISTS (SELECT 1 FROM posts p WHERE p.uuid = b.uuid)`,
      [sourceSha, ingestedAt, ingestedAt]);
  }
  const [b] = await db.all(`SELECT count(*) AS n FROM batch`);
  const accepted = num(b?.n) - existing;
  return { accepted, updated: validN - accepted, countsChanged: num(e?.newer) };
}
