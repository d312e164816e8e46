// Upsert of a validated batch into the work store's `posts`. A uuid seen before keeps its content
// (the first version wins: edits are not part of the input contract) and takes the engagement
// counts of its latest observation; within a batch the same rule applies record by record.
// A deletion record ({"uuid", "deleted": true}) is final: it is recorded in `deletions`, removes the
// post, and keeps the uuid out from then on (a deletion of a post not seen yet is applied when it
// arrives: it never does). The next generation leaves the post out everywhere.
// The common cases (no repeated uuid in the batch; no uuid already stored) skip the window
// functions and the update, which would otherwise copy every row of a bulk load twice more.
import type { DuckDB } from '../../core/infra/duckdb.ts';
import { num, sqlString } from '../../core/infra/duckdb.ts';

interface MergeCounts {
  /** Valid records whose uuid was new: one post each. */
  accepted: number;
  /** Valid records for a uuid already known (stored earlier, or earlier in this file). */
  updated: number;
  /** Stored posts whose counts changed because of this batch. */
  countsChanged: number;
  /** Valid deletion records (one per uuid), and the stored posts they removed. */
  deletions: number;
  deleted: number;
  /** Valid records of a deleted uuid: not ingested (a deletion is final). */
  ofDeleted: number;
}

const CONTENT = `uuid, platform, content_type, creator_id, creator_handle, title, description, tags,
  published_at, content_url, media, language, text_embedding, visual_embedding`;
const COUNTS = `like_count, comment_count, share_count, view_count, follower_count`;

export async function mergeValid(db: DuckDB, sourceSha: string, ingestedAt: string): Promise<MergeCounts> {
  // Views take no parameters; ingestedAt is our own ISO timestamp, quoted as a literal.
  // Deletions first: recorded, their posts removed; then every other record of a deleted uuid is dropped.
  await db.run(`CREATE OR REPLACE TEMP TABLE deleting AS
    SELECT uuid, min(coalesce(observed_at, ${sqlString(ingestedAt)}::TIMESTAMPTZ)) AS obs
    FROM checked2 WHERE is_deletion AND len(reasons) = 0 GROUP BY uuid`);
  // Every valid deletion record counts (a repeated one too), so that read = accepted + updated + deletions + ofDeleted + quarantined.
  const [dr] = await db.all(`SELECT count(*) AS n FROM checked2 WHERE is_deletion AND len(reasons) = 0`);
  const deletions = num(dr?.n);
  let deleted = 0;
  if (deletions > 0) {
    await db.run(`INSERT INTO deletions SELECT uuid, obs, ?, ?::TIMESTAMPTZ FROM deleting ON CONFLICT (uuid) DO NOTHING`, [
      sourceSha,
      ingestedAt,
    ]);
    const [gone] = await db.all(`SELECT count(*) AS n FROM posts SEMI JOIN deleting USING (uuid)`);
    deleted = num(gone?.n);
    if (deleted > 0) await db.run(`DELETE FROM posts WHERE uuid IN (SELECT uuid FROM deleting)`);
  }
  const [od] = await db.all(`SELECT count(*) AS n FROM checked2 c
    WHERE len(reasons) = 0 AND NOT is_deletion AND EXISTS (SELECT 1 FROM deletions d WHERE d.uuid = c.uuid)`);
  const ofDeleted = num(od?.n);
  await db.run(`CREATE OR REPLACE TEMP VIEW valid AS
    SELECT *, coalesce(observed_at, ${sqlString(ingestedAt)}::TIMESTAMPTZ) AS obs FROM checked2 c
    WHERE len(reasons) = 0 AND NOT is_deletion AND NOT EXISTS (SELECT 1 FROM deletions d WHERE d.uuid = c.uuid)`);
  // Only uuids repeated within the file need the first/latest resolution (window functions);
  // the rest pass straight through.
  await db.run(`CREATE OR REPLACE TEMP TABLE repeated AS SELECT uuid FROM valid GROUP BY uuid HAVING count(*) > 1`);
  const [v] = await db.all(`SELECT (SELECT count(*) FROM valid) AS n, (SELECT count(*) FROM repeated) AS repeated`);
  const validN = num(v?.n);
  // `batch` is always a view (one file of a run may need the resolved table and the next not: a
  // view and a table cannot replace each other under one name).
  if (num(v?.repeated) === 0) {
    await db.run(`CREATE OR REPLACE TEMP VIEW batch AS SELECT ${CONTENT}, ${COUNTS}, obs, rec FROM valid`);
  } else {
    await db.run(`CREATE OR REPLACE TEMP TABLE resolved_batch AS
      SELECT ${CONTENT}, ${COUNTS}, obs, rec FROM valid ANTI JOIN repeated USING (uuid)
      UNION ALL BY NAME
      SELECT f.*, l.* EXCLUDE (uuid) FROM
        (SELECT ${CONTENT}, rec FROM valid SEMI JOIN repeated USING (uuid)
         QUALIFY row_number() OVER (PARTITION BY uuid ORDER BY rec) = 1) f
      JOIN (SELECT uuid, ${COUNTS}, obs FROM valid SEMI JOIN repeated USING (uuid)
         QUALIFY row_number() OVER (PARTITION BY uuid ORDER BY obs DESC, rec DESC) = 1) l
      USING (uuid)`);
    await db.run(`CREATE OR REPLACE TEMP VIEW batch AS SELECT * FROM resolved_batch`);
  }
  // Batch rows whose uuid is already stored: usually a small set, so both the update and the
  // insert's anti-join build their hash tables on it rather than on the (large) posts table.
  await db.run(`CREATE OR REPLACE TEMP TABLE known AS
    SELECT b.uuid, b.like_count, b.comment_count, b.share_count, b.view_count, b.follower_count, b.obs,
           b.obs >= p.observed_at AS newer
    FROM batch b JOIN posts p USING (uuid)`);
  const [e] = await db.all(`SELECT count(*) AS n, count(*) FILTER (WHERE newer) AS newer FROM known`);
  const existing = num(e?.n);
  const insertCols = `${CONTENT}, ${COUNTS}, observed_at, source_sha256, source_record, first_ingested_at, updated_at`;
  const insertSelect = `SELECT ${CONTENT}, ${COUNTS}, obs, ?, rec, ?::TIMESTAMPTZ, ?::TIMESTAMPTZ FROM batch`;
  // Row order in the work store means nothing (publish sorts), so inserts may run unordered, in parallel.
  await db.run(`SET preserve_insertion_order = false`);
  if (existing === 0) {
    await db.run(`INSERT INTO posts (${insertCols}) ${insertSelect}`, [sourceSha, ingestedAt, ingestedAt]);
  } else {
    await db.run(
      `UPDATE posts SET like_count = k.like_count, comment_count = k.comment_count, share_count = k.share_count,
        view_count = k.view_count, follower_count = coalesce(k.follower_count, posts.follower_count),
        observed_at = k.obs, updated_at = ?::TIMESTAMPTZ
      FROM known k WHERE posts.uuid = k.uuid AND k.newer`,
      [ingestedAt],
    );
    await db.run(`INSERT INTO posts (${insertCols}) ${insertSelect} ANTI JOIN known USING (uuid)`, [sourceSha, ingestedAt, ingestedAt]);
  }
  await db.run(`SET preserve_insertion_order = true`);
  const [b] = await db.all(`SELECT count(*) AS n FROM batch`);
  const accepted = num(b?.n) - existing;
  return { accepted, updated: validN - accepted, countsChanged: num(e?.newer), deletions, deleted, ofDeleted };
}
