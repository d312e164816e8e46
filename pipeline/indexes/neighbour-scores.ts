// Novelty and saturation of every post, from its nearest neighbours across the text HNSW shards
// (formulas in core/enrichment/scores.ts and docs/enrichment.md):
//   noveltyScore    1 - the highest similarity to a post published before it (rows are in
//                   published_at order, so "earlier" is a smaller row number); 1 when none
//   saturationScore share of near-duplicates (similarity >= 0.9) among its 10 nearest neighbours
// The searches run in the index stage's worker threads (hnsw-worker.ts), a range of rows a task.
// Written to artifacts/neighbour-scores.parquet: row_id, novelty_score, saturation_score,
// coverage_novelty (false for rows without a text vector: nothing to compare).
import { noveltyScore, saturationScore } from '../../core/enrichment/enrich-text.ts';
import type { TaskPool } from '../../core/workers/task-pool.ts';
import { writeRowTable } from '../row-table.ts';
import type { StageContext } from '../stage-context.ts';
import { StageAborted } from '../stage-context.ts';
import type { HnswResult, HnswTask, NeighbourResult } from './hnsw-task.ts';

export const NEIGHBOURS = 10;
/** Search breadth per shard: near-duplicates, the neighbours these scores are about, are found early. */
export const NEIGHBOUR_EF = 16;
const TASK_ROWS = 25_000;

export async function computeNeighbourScores(
  ctx: StageContext,
  pool: TaskPool<HnswTask, HnswResult>,
  o: { dir: string; name: string; vectorsFile: string; rows: number; points: number },
): Promise<{ scored: number; ms: number }> {
  const t0 = performance.now();
  const tasks: Array<Promise<{ first: number; r: NeighbourResult }>> = [];
  if (o.points >= 2) {
    for (let first = 0; first < o.rows; first += TASK_ROWS) {
      const endRow = Math.min(o.rows, first + TASK_ROWS);
      tasks.push(
        pool
          .run({
            kind: 'neighbours',
            dir: o.dir,
            name: o.name,
            vectorsFile: o.vectorsFile,
            firstRow: first,
            endRow,
            k: NEIGHBOURS,
            ef: NEIGHBOUR_EF,
          })
          .then((r) => ({ first, r: r as NeighbourResult })),
      );
    }
  }
  const bar = ctx.progress('neighbours', o.rows);
  let done = 0;
  for (const t of tasks)
    void t.then(
      () => bar.update((done += TASK_ROWS)),
      () => undefined,
    );
  const parts = await Promise.all(tasks);
  bar.stop();
  if (ctx.signal.aborted) throw new StageAborted('index');
  const out: unknown[] = Array.from({ length: o.rows }, (_, r) => ({
    row_id: r,
    novelty_score: null,
    saturation_score: null,
    coverage_novelty: false,
  }));
  let scored = 0;
  for (const { first, r } of parts) {
    for (let i = 0; i < r.bestEarlier.length; i++) {
      const best = r.bestEarlier[i]!;
      if (best === -1) continue;
      const near = Array.from(r.nearest.subarray(i * NEIGHBOURS, (i + 1) * NEIGHBOURS)).filter(Number.isFinite);
      out[first + i] = {
        row_id: first + i,
        novelty_score: noveltyScore(Number.isNaN(best) ? [] : [best]),
        saturation_score: saturationScore(near),
        coverage_novelty: true,
      };
      scored++;
    }
  }
  await writeRowTable(
    ctx,
    'neighbour-scores',
    { row_id: 'BIGINT', novelty_score: 'DOUBLE', saturation_score: 'DOUBLE', coverage_novelty: 'BOOLEAN' },
    out,
  );
  return { scored, ms: Math.round(performance.now() - t0) };
}
