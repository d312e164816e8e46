// A built segment's per-row tables (enrichment, visual elements, neighbour scores), assembled by
// DuckDB from where each of its rows' data is (pipeline/segments/segment-plan.ts): the rows of its base (an
// appended segment keeps them all, masked ones too, at their rows), rows copied from other segments
// of the served generation (a rebuilt one), and the rows this run computed (a Parquet file keyed by
// ci). Written to segments/<id>/<name>.parquet with row_id = the row in the segment. A column a kept segment's
// table lacks (written before the column existed) is NULL for its rows.
import fs from 'node:fs/promises';
import path from 'node:path';
import { columnNames, sqlString } from '../../core/infra/duckdb.ts';
import { segmentDir } from '../../core/snapshots/segments.ts';
import { servedSegmentDir, type PlannedSegment, type SegmentPlan } from './segment-plan.ts';
import type { StageContext } from '../context/stage-context.ts';

interface SegmentTable {
  name: string;
  /** Columns besides row_id, with their DuckDB types. */
  columns: Record<string, string>;
  /** The computed rows' table (ci, then `columns`). */
  computed: string;
}

export async function writeSegmentTable(ctx: StageContext, plan: SegmentPlan, seg: PlannedSegment, t: SegmentTable): Promise<void> {
  const db = await ctx.db();
  const file = (dir: string) => sqlString(path.join(dir, `${t.name}.parquet`));
  // The columns as `alias.column`, NULL where the file has none.
  const pick = async (alias: string, from: string) => {
    const has = await columnNames(db, `read_parquet(${from})`);
    return Object.entries(t.columns)
      .map(([c, type]) => (has.has(c) ? `${alias}.${c}` : `NULL::${type} AS ${c}`))
      .join(', ');
  };
  const id = sqlString(seg.id);
  const parts: string[] = [];
  if (seg.base) {
    const base = file(servedSegmentDir(plan, seg.base));
    parts.push(`SELECT row_id, ${await pick('b', base)} FROM read_parquet(${base}) b`);
  }
  const sources = await db.all<{ s: string }>(
    `SELECT DISTINCT src_segment AS s FROM plan_rows WHERE segment = ${id} AND NOT compute AND src_segment IS DISTINCT FROM ?`,
    [seg.base],
  );
  for (const { s } of sources) {
    const source = file(servedSegmentDir(plan, s));
    parts.push(`SELECT r.local_row AS row_id, ${await pick('e', source)} FROM plan_rows r
      JOIN read_parquet(${source}) e ON e.row_id = r.src_row
      WHERE r.segment = ${id} AND r.src_segment = ${sqlString(s)}`);
  }
  const computed = sqlString(t.computed);
  parts.push(`SELECT r.local_row AS row_id, ${await pick('n', computed)} FROM plan_rows r JOIN read_parquet(${computed}) n ON n.ci = r.ci
    WHERE r.segment = ${id} AND r.compute`);
  const out = path.join(segmentDir(ctx.layout.artifacts, seg.id), `${t.name}.parquet`);
  await fs.mkdir(path.dirname(out), { recursive: true });
  await db.run(`COPY (SELECT * FROM (${parts.join('\nUNION ALL\n')}) ORDER BY row_id) TO ${sqlString(out)} (FORMAT parquet)`);
}
