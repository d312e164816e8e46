// A map's members table (narrative-members.parquet, pattern-members.parquet): one row per member of
// each entry, (row_id, <owner>, <group>, post_row, uuid, similarity, rank), ordered by row_id. A
// million members are written as plain CSV lines of numbers; DuckDB joins each entry's id and group
// and each post's uuid (the work store's plan_rows), so no object or string per member is built in
// JS (the NDJSON path of row-table.ts cost seconds and most of the stage's garbage at 1M posts).
import path from 'node:path';
import { sqlString } from '../../core/infra/duckdb.ts';
import type { StageContext } from '../context/stage-context.ts';

interface MemberEntry {
  /** The entry's id (narrative_id) or key (pattern_key). */
  owner: string;
  /** Its window (window_key) or scope (scope_key). */
  group: string;
  /** Member rows, rank order. */
  members: ArrayLike<number>;
  /** Each member's similarity to the entry's centre, in the same order. */
  similarity: ArrayLike<number>;
}

export async function writeMemberTable(
  ctx: StageContext,
  name: string,
  columns: { owner: string; group: string },
  entries: readonly MemberEntry[],
): Promise<void> {
  const db = await ctx.db();
  const total = entries.reduce((a, x) => a + x.members.length, 0);
  const rowId = new Int32Array(total);
  const owner = new Int32Array(total);
  const postRow = new Int32Array(total);
  const similarity = new Float64Array(total);
  const rank = new Int32Array(total);
  let at = 0;
  entries.forEach(({ members, similarity: sim }, e) => {
    for (let k = 0; k < members.length; k++, at++) {
      rowId[at] = at;
      owner[at] = e;
      postRow[at] = members[k]!;
      similarity[at] = sim[k]!;
      rank[at] = k + 1;
    }
  });
  await db.run(`CREATE OR REPLACE TEMP TABLE members_in (row_id INTEGER, e INTEGER, post_row INTEGER, similarity DOUBLE, rank INTEGER)`);
  await db.appendNumbers('members_in', [rowId, owner, postRow, similarity, rank]);
  const owners = entries.length
    ? `(VALUES ${entries.map((x, e) => `(${e}, ${sqlString(x.owner)}, ${sqlString(x.group)})`).join(', ')}) AS o(e, owner, grp)`
    : `(SELECT NULL::INTEGER AS e, NULL::VARCHAR AS owner, NULL::VARCHAR AS grp WHERE false) AS o`;
  await db.run(`COPY (
    SELECT m.row_id::BIGINT AS row_id, o.owner AS ${columns.owner}, o.grp AS ${columns.group}, m.post_row::BIGINT AS post_row, r.uuid,
      m.similarity, m.rank
    FROM members_in m JOIN ${owners} USING (e)
      LEFT JOIN plan_rows r ON r.row_id = m.post_row
    ORDER BY m.row_id) TO ${sqlString(path.join(ctx.layout.artifacts, `${name}.parquet`))} (FORMAT parquet)`);
  await db.run(`DROP TABLE members_in`);
}
