// Novelty and saturation of the rows this run computed, from their nearest neighbours across every
// segment's text graph (formulas in core/enrichment/scores.ts and docs/enrichment.md):
//   noveltyScore    1 - the highest similarity to a post published before it (rows are in
//                   published_at order, so "earlier" is a smaller row number); 1 when none
//   saturationScore share of near-duplicates (similarity >= 0.9) among its 10 nearest neighbours
// A row's scores are as of its insertion: a row an incremental run keeps keeps its scores (later
// near-duplicates do not raise an older post's saturation) until a full run computes them anew.
// The searches run in the index stage's worker threads (hnsw-worker.ts), a range of rows a task.
// Written to intermediate/computed-neighbour-scores.parquet (ci, novelty_score, saturation_score,
// coverage_novelty: false for rows without a text vector, nothing to compare), from which each
// built segment's neighbour-scores.parquet is assembled (segment-tables.ts).
import path from 'node:path';
import { noveltyScore, saturationScore } from '../../core/enrichment/enrich-text.ts';
import { segmentDir } from '../../core/segments.ts';
import type { TaskPool } from '../../core/workers/task-pool.ts';
import { writeRowTable } from '../row-table.ts';
import { maskedRows, plannedSegmentDir, type SegmentPlan } from '../segment-plan.ts';
import type { StageContext } from '../stage-context.ts';
import { StageAborted } from '../stage-context.ts';
import type { HnswResult, HnswTask, NeighbourResult } from './hnsw-task.ts';

export const NEIGHBOURS = 10;
/** Search breadth per segment: near-duplicates, the neighbours these scores are about, are found early. */
export const NEIGHBOUR_EF = 16;
const TASK_ROWS = 25_000;

export const NEIGHBOUR_COLUMNS = { novelty_score: 'DOUBLE', saturation_score: 'DOUBLE', coverage_novelty: 'BOOLEAN' } as const;

export async function computeNeighbourScores(
  ctx: StageContext,
  pool: TaskPool<HnswTask, HnswResult>,
  plan: SegmentPlan,
  dim: number,
  out: string,
): Promise<{ scored: number; ms: number }> {
  const t0 = performance.now();
  const db = await ctx.db();
  const sources = plan.segments.map((s) => ({
    id: s.id,
    dir: plannedSegmentDir(ctx, plan, s),
    firstRow: s.firstRow,
    rows: s.rows,
    points: s.textPoints,
  }));
  const masked = maskedRows(plan);
  const points = sources.reduce((a, s) => a + s.points, 0);
  const tasks: Array<Promise<{ ci: Uint32Array; r: NeighbourResult }>> = [];
  let total = 0;
  for (const seg of plan.segments.filter((s) => s.action === 'build')) {
    const rows = await db.all<{ local_row: number; ci: number }>(
      `SELECT local_row, ci FROM plan_rows WHERE segment = ? AND compute ORDER BY local_row`,
      [seg.id],
    );
    total += rows.length;
    if (points < 2) continue;
    // At least one task per worker: an hour's new posts (fewer than TASK_ROWS) would otherwise
    // keep one core searching while the other waits.
    const size = Math.max(1, Math.min(TASK_ROWS, Math.ceil(rows.length / pool.size)));
    for (let at = 0; at < rows.length; at += size) {
      const part = rows.slice(at, at + size);
      const ci = Uint32Array.from(part, (r) => Number(r.ci));
      tasks.push(
        pool
          .run({
            kind: 'neighbours',
            sources,
            masked,
            dim,
            vectorsFile: path.join(segmentDir(ctx.layout.artifacts, seg.id), 'text-vectors.f32'),
            firstRow: seg.firstRow,
            locals: Uint32Array.from(part, (r) => Number(r.local_row)),
            k: NEIGHBOURS,
            ef: NEIGHBOUR_EF,
          })
          .then((r) => ({ ci, r: r as NeighbourResult })),
      );
    }
  }
  const bar = ctx.progress('neighbours', total);
  let done = 0;
  for (const t of tasks)
    void t.then(
      (x) => bar.update((done += x.ci.length)),
      () => undefined,
    );
  const parts = await Promise.all(tasks);
  bar.stop();
  if (ctx.signal.aborted) throw new StageAborted('index');
  const table: unknown[] = Array.from({ length: plan.computeRows }, (_, ci) => ({
    ci,
    novelty_score: null,
    saturation_score: null,
    coverage_novelty: false,
  }));
  let scored = 0;
  for (const { ci, r } of parts) {
    for (let i = 0; i < ci.length; i++) {
      const best = r.bestEarlier[i]!;
      if (best === -1) continue;
      const near = Array.from(r.nearest.subarray(i * NEIGHBOURS, (i + 1) * NEIGHBOURS)).filter(Number.isFinite);
      table[ci[i]!] = {
        ci: ci[i],
        novelty_score: noveltyScore(Number.isNaN(best) ? [] : [best]),
        saturation_score: saturationScore(near),
        coverage_novelty: true,
      };
      scored++;
    }
  }
  await writeRowTable(ctx, 'computed-neighbour-scores', { ci: 'BIGINT', ...NEIGHBOUR_COLUMNS }, table, out);
  return { scored, ms: Math.round(performance.now() - t0) };
}
