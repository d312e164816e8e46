// Novelty and saturation of every post, from its nearest neighbours in the HNSW text index
// (formulas in core/enrichment/scores.ts and docs/enrichment.md):
//   noveltyScore    1 - the highest similarity to a post published before it (rows are in
//                   published_at order, so "earlier" is a smaller row number); 1 when none
//   saturationScore share of near-duplicates (similarity >= 0.9) among its 10 nearest neighbours
// Written to artifacts/neighbour-scores.parquet: row_id, novelty_score, saturation_score,
// coverage_novelty (false for rows without a text vector: nothing to compare).
import type hnswlib from 'hnswlib-node';
import { noveltyScore, saturationScore } from '../../core/enrichment/index.ts';
import { writeRowTable } from '../row-table.ts';
import type { StageContext } from '../stage.ts';
import { StageAborted } from '../stage.ts';

export const NEIGHBOURS = 10;

export async function computeNeighbourScores(ctx: StageContext, index: InstanceType<typeof hnswlib.HierarchicalNSW>, vectors: Float32Array, dim: number): Promise<{ scored: number; ms: number }> {
  const t0 = performance.now();
  const count = vectors.length / dim;
  const points = index.getCurrentCount();
  index.setEf(64);
  const rows: unknown[] = [];
  let scored = 0;
  for (let r = 0; r < count; r++) {
    const v = vectors.subarray(r * dim, (r + 1) * dim);
    if (points < 2 || !v.some((x) => x !== 0)) {
      rows.push({ row_id: r, novelty_score: null, saturation_score: null, coverage_novelty: false });
      continue;
    }
    const res = index.searchKnn(Array.from(v), Math.min(NEIGHBOURS + 1, points));
    const sims: number[] = [];
    const earlier: number[] = [];
    res.neighbors.forEach((n, i) => {
      if (n === r) return;
      const sim = 1 - res.distances[i]!;
      sims.push(sim);
      if (n < r) earlier.push(sim);
    });
    const neighbours = sims.slice(0, NEIGHBOURS);
    rows.push({ row_id: r, novelty_score: noveltyScore(earlier), saturation_score: saturationScore(neighbours), coverage_novelty: true });
    scored++;
    if (r % 20_000 === 0 && ctx.signal.aborted) throw new StageAborted('index');
  }
  await writeRowTable(ctx, 'neighbour-scores', { row_id: 'BIGINT', novelty_score: 'DOUBLE', saturation_score: 'DOUBLE', coverage_novelty: 'BOOLEAN' }, rows);
  return { scored, ms: Math.round(performance.now() - t0) };
}
