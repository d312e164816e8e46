// A built segment's per-row tables (enrichment, visual elements, neighbour scores), assembled by
// DuckDB from where each of its rows' data is (pipeline/segment-plan.ts): the rows of its base (an
// appended segment keeps them all, masked ones too, at their rows), rows copied from other segments
// of the served generation (a rebuilt one), and the rows this run computed (a Parquet file keyed by
// ci). Written to segments/<id>/<name>.parquet with row_id = the row in the segment.
import fs from 'node:fs/promises';
import path from 'node:path';
import { sqlString } from '../core/infra/duckdb.ts';
import { segmentDir } from '../core/snapshots/segments.ts';
import { servedSegmentDir, type PlannedSegment, type SegmentPlan } from './segment-plan.ts';
import type { StageContext } from './stage-context.ts';

interface SegmentTable {
  name: string;
  /** Columns besides row_id, with their DuckDB types. */
  columns: Record<string, string>;
  /** The computed rows' table (ci, then `columns`). */
  computed: string;
}

export async function writeSegmentTable(ctx: StageContext, plan: SegmentPlan, seg: PlannedSegment, t: SegmentTable): Promise<void> {
  const db = await ctx.db();
  const cols = Object.keys(t.columns);
  const pick = (alias: string) => cols.map((c) => `${alias}.${c}`).join(', ');
  const file = (dir: string) => sqlString(path.join(dir, `${t.name}.parquet`));
  const id = sqlString(seg.id);
  const parts: string[] = [];
  if (seg.base) parts.push(`SELECT row_id, ${pick('b')} FROM read_parquet(${file(servedSegmentDir(plan, seg.base))}) b`);
  const sources = await db.all<{ s: string }>(
    `SELECT DISTINCT src_segment AS s FROM plan_rows WHERE segment = ${id} AND NOT compute AND src_segment IS DISTINCT FROM ?`,
    [seg.base],
  );
  for (const { s } of sources) {
    parts.push(`SELECT r.local_row AS row_id, ${pick('e')} FROM plan_rows r
      JOIN read_parquet(${file(servedSegmentDir(plan, s))}) e ON e.row_id = r.src_row
      WHERE r.segment = ${id} AND r.src_segment = ${sqlString(s)}`);
  }
  parts.push(`SELECT r.local_row AS row_id, ${pick('n')} FROM plan_rows r JOIN read_parquet(${sqlString(t.computed)}) n ON n.ci = r.ci
    WHERE r.segment = ${id} AND r.compute`);
  const out = path.join(segmentDir(ctx.layout.artifacts, seg.id), `${t.name}.parquet`);
  await fs.mkdir(path.dirname(out), { recursive: true });
  await db.run(`COPY (SELECT * FROM (${parts.join('\nUNION ALL\n')}) ORDER BY row_id) TO ${sqlString(out)} (FORMAT parquet)`);
}
