// Novelty and saturation of the rows this run computed, from their nearest neighbours across every
// segment's text graph (formulas in core/enrichment/scores.ts and docs/enrichment.md):
//   noveltyScore    1 - the highest similarity to a post published before it (rows are in
//                   published_at order, so "earlier" is a smaller row number); 1 when none
//   saturationScore share of near-duplicates (similarity >= 0.95) among its 10 nearest neighbours
// A row's scores are as of its insertion: a row an incremental run keeps keeps its scores (later
// near-duplicates do not raise an older post's saturation) until a full run computes them anew.
//
// The searches run in the index stage's worker threads (hnsw-worker.ts). A row's own segment's graph
// is searched by the worker that builds it, right after building, while it holds the graph; the
// other segments' graphs by neighbour tasks (a range of rows each), which start as soon as those
// graphs exist: on an incremental run they are the reused ones, so those searches overlap the build.
// Each search returns its k + 1 nearest (the row itself among them); the merged lists give exactly
// what one search of every graph gives (a search is per segment, its results merged by similarity).
// Written to intermediate/computed-neighbour-scores.parquet (ci, novelty_score, saturation_score,
// coverage_novelty: false for rows without a text vector, nothing to compare), from which each
// built segment's neighbour-scores.parquet is assembled (segment-tables.ts).
import path from 'node:path';
import { noveltyScore, saturationScore } from '../../core/enrichment/enrich-text.ts';
import type { GraphSource } from '../../core/ranking/segment-graphs.ts';
import { segmentDir } from '../../core/snapshots/segments.ts';
import type { TaskPool } from '../../core/infra/workers/task-pool.ts';
import { writeRowTable } from '../store/row-table.ts';
import { maskedRows, plannedSegmentDir, type PlannedSegment, type SegmentPlan } from '../segments/segment-plan.ts';
import type { StageContext } from '../context/stage-context.ts';
import type { HnswResult, HnswTask, NeighbourLists, NeighbourQuery } from './hnsw-task.ts';

const NEIGHBOURS = 10;
/** Search breadth per segment: near-duplicates, the neighbours these scores are about, are found early. */
const NEIGHBOUR_EF = 16;
const TASK_ROWS = 25_000;

export const NEIGHBOUR_COLUMNS = { novelty_score: 'DOUBLE', saturation_score: 'DOUBLE', coverage_novelty: 'BOOLEAN' } as const;

/** A built segment's computed rows: their rows in it (ascending) and places among the computed rows. */
interface SegmentQuery {
  query: NeighbourQuery;
  ci: Uint32Array;
}

/** Per built segment, the query for its computed rows (the build task searches its own graph with it). */
export async function neighbourQueries(ctx: StageContext, plan: SegmentPlan): Promise<Map<string, SegmentQuery>> {
  const db = await ctx.db();
  const masked = maskedRows(plan);
  const out = new Map<string, SegmentQuery>();
  for (const seg of plan.segments.filter((s) => s.action === 'build')) {
    const c = await db.numbers(
      `SELECT local_row::INTEGER AS local_row, ci::INTEGER AS ci FROM plan_rows WHERE segment = '${seg.id}' AND compute ORDER BY local_row`,
    );
    out.set(seg.id, {
      query: {
        vectorsFile: path.join(segmentDir(ctx.layout.artifacts, seg.id), 'text-vectors.f32'),
        firstRow: seg.firstRow,
        locals: Uint32Array.from(c.local_row ?? []),
        k: NEIGHBOURS + 1,
        ef: NEIGHBOUR_EF,
        masked,
      },
      ci: Uint32Array.from(c.ci ?? []),
    });
  }
  return out;
}

/**
 * The built segment's rows searched in every other segment's graph, once those exist (`builtPoints`:
 * the text points of each built segment, when its graph is done). Lists in the query's row order.
 */
export async function searchOtherSegments(
  ctx: StageContext,
  pool: TaskPool<HnswTask, HnswResult>,
  plan: SegmentPlan,
  seg: PlannedSegment,
  q: SegmentQuery,
  dim: number,
  builtPoints: Map<string, Promise<number>>,
): Promise<Array<{ at: number; lists: NeighbourLists }>> {
  const others = plan.segments.filter((s) => s.id !== seg.id);
  const sources: GraphSource[] = [];
  for (const s of others) {
    const points = s.action === 'build' ? await builtPoints.get(s.id)! : s.textPoints;
    sources.push({ id: s.id, dir: plannedSegmentDir(ctx, plan, s), firstRow: s.firstRow, rows: s.rows, points });
  }
  const n = q.query.locals.length;
  if (n === 0 || sources.every((s) => s.points === 0)) return [];
  ctx.signal.throwIfAborted();
  // At least one task per worker: an hour's new posts (fewer than TASK_ROWS) would otherwise
  // keep one core searching while the other waits.
  const size = Math.max(1, Math.min(TASK_ROWS, Math.ceil(n / pool.size)));
  const parts: Array<Promise<{ at: number; lists: NeighbourLists }>> = [];
  for (let at = 0; at < n; at += size) {
    const task: HnswTask = { kind: 'neighbours', ...q.query, locals: q.query.locals.subarray(at, at + size), sources, dim };
    parts.push(pool.run(task).then((r) => ({ at, lists: r as NeighbourLists })));
  }
  return Promise.all(parts);
}

/** Each row's novelty and saturation from its lists (its own segment's and the others'), written as the computed table. */
export async function writeNeighbourScores(
  ctx: StageContext,
  plan: SegmentPlan,
  rows: Array<{ q: SegmentQuery; own: NeighbourLists | null; others: Array<{ at: number; lists: NeighbourLists }> }>,
  out: string,
): Promise<number> {
  const table: unknown[] = Array.from({ length: plan.computeRows }, (_, ci) => ({
    ci,
    novelty_score: null,
    saturation_score: null,
    coverage_novelty: false,
  }));
  let scored = 0;
  const k1 = NEIGHBOURS + 1;
  const found: Array<{ row: number; sim: number }> = [];
  for (const { q, own, others } of rows) {
    // Fewer than two points in all: nothing to compare (every row's scores stay null).
    if (!own) continue;
    for (let i = 0; i < q.ci.length; i++) {
      if (own.noVector[i]) continue;
      found.length = 0;
      const take = (l: NeighbourLists, j: number) => {
        for (let x = j * k1; x < (j + 1) * k1 && l.rows[x]! >= 0; x++) found.push({ row: l.rows[x]!, sim: l.sims[x]! });
      };
      take(own, i);
      for (const o of others) if (i >= o.at && i - o.at < o.lists.noVector.length) take(o.lists, i - o.at);
      found.sort((a, b) => b.sim - a.sim || a.row - b.row);
      const row = q.query.firstRow + q.query.locals[i]!;
      let best = NaN;
      const near: number[] = [];
      for (const nb of found.slice(0, k1)) {
        if (nb.row === row) continue;
        if (nb.row < row && !(best >= nb.sim)) best = nb.sim;
        if (near.length < NEIGHBOURS) near.push(nb.sim);
      }
      table[q.ci[i]!] = {
        ci: q.ci[i],
        novelty_score: noveltyScore(Number.isNaN(best) ? [] : [best]),
        saturation_score: saturationScore(near),
        coverage_novelty: true,
      };
      scored++;
    }
  }
  await writeRowTable(ctx, 'computed-neighbour-scores', { ci: 'BIGINT', ...NEIGHBOUR_COLUMNS }, table, out);
  return scored;
}
