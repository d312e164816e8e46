// A map's members table (narrative-members.parquet, pattern-members.parquet): one row per member of
// each entry, (row_id, <owner>, <group>, post_row, uuid, similarity, rank), ordered by row_id. A
// million members are written as plain CSV lines of numbers; DuckDB joins each entry's id and group
// and each post's uuid (the work store's plan_rows), so no object or string per member is built in
// JS (the NDJSON path of row-table.ts cost seconds and most of the stage's garbage at 1M posts).
import fs from 'node:fs/promises';
import path from 'node:path';
import { sqlString } from '../core/duckdb.ts';
import type { StageContext } from './stage-context.ts';

const LINES = 50_000;

export interface MemberEntry {
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
  const tmp = path.join(ctx.layout.work, 'intermediate', `${name}.csv`);
  await fs.mkdir(path.dirname(tmp), { recursive: true });
  const fh = await fs.open(tmp, 'w');
  let rowId = 0;
  try {
    let lines: string[] = [];
    for (let e = 0; e < entries.length; e++) {
      const { members, similarity } = entries[e]!;
      for (let k = 0; k < members.length; k++) {
        lines.push(`${rowId++},${e},${members[k]},${similarity[k]},${k + 1}`);
        if (lines.length === LINES) (await fh.write(lines.join('\n') + '\n'), (lines = []));
      }
    }
    if (lines.length) await fh.write(lines.join('\n') + '\n');
  } finally {
    await fh.close();
  }
  const owners = entries.length
    ? `(VALUES ${entries.map((x, e) => `(${e}, ${sqlString(x.owner)}, ${sqlString(x.group)})`).join(', ')}) AS o(e, owner, grp)`
    : `(SELECT NULL::INTEGER AS e, NULL::VARCHAR AS owner, NULL::VARCHAR AS grp WHERE false) AS o`;
  const spec = `{row_id: 'BIGINT', e: 'INTEGER', post_row: 'BIGINT', similarity: 'DOUBLE', rank: 'INTEGER'}`;
  const lines =
    rowId > 0
      ? `read_csv(${sqlString(tmp)}, header = false, columns = ${spec})`
      : `(SELECT NULL::BIGINT AS row_id, NULL::INTEGER AS e, NULL::BIGINT AS post_row, NULL::DOUBLE AS similarity, NULL::INTEGER AS rank WHERE false)`;
  await db.run(`COPY (
    SELECT m.row_id, o.owner AS ${columns.owner}, o.grp AS ${columns.group}, m.post_row, r.uuid, m.similarity, m.rank
    FROM ${lines} m JOIN ${owners} USING (e)
      LEFT JOIN plan_rows r ON r.row_id = m.post_row
    ORDER BY m.row_id) TO ${sqlString(path.join(ctx.layout.artifacts, `${name}.parquet`))} (FORMAT parquet)`);
}
