// The HNSW graphs of a generation: one hnswlib graph per time segment (core/segments.ts), labels =
// rows of the segment; a row's global row is the segment's first row + its label.
//
// Why per segment: hnswlib-node inserts on one thread, and the graph of a million posts takes
// minutes to build. Segments build side by side in worker threads on a full run; an incremental run
// reuses the sealed segments' graphs untouched and extends the head's by the new points only. A
// window search reads the segments inside the window whole and filters only the one the window's
// start falls into (Lucene, Qdrant and Milvus search segments the same way). Rows of posts deleted
// after their segment was built are marked deleted in the loaded graph (hnswlib markDelete): the
// search walks past them and never returns them.
//   segments/<id>/text.hnsw    space ip (inner product of unit vectors = cosine), HNSW_PARAMS
//   segments/<id>/visual.hnsw  space cosine, VISUAL_HNSW_PARAMS
import path from 'node:path';
import hnswlib from 'hnswlib-node';

export type HnswSpace = 'ip' | 'cosine';
export interface HnswParams {
  m: number;
  efConstruction: number;
  seed: number;
}
export type GraphName = 'text' | 'visual';

export interface Neighbour {
  row: number;
  sim: number;
}

// M 32, efConstruction 200: on the fixture's dense narrative clusters the graph's quality, not
// only the search breadth, limits recall. On the newest 200k rows of the 1M corpus, M 32 over
// M 16 lifts recall@10 at ef 200 from 0.93 to 0.95 for about 12% more build time, where
// efConstruction 400 costs 2x (ad-hoc sweeps; the 1M figures are in bench/RESULTS.md).
export const HNSW_PARAMS: HnswParams = { m: 32, efConstruction: 200, seed: 42 };
// The visual graph answers "which posts look like this one" (lookalikes, not the ranked search):
// hnswlib's defaults suffice, at a third of the text graph's build cost.
export const VISUAL_HNSW_PARAMS: HnswParams = { m: 16, efConstruction: 100, seed: 42 };

export const GRAPHS: Record<GraphName, { space: HnswSpace; params: HnswParams; file: string }> = {
  text: { space: 'ip', params: HNSW_PARAMS, file: 'text.hnsw' },
  visual: { space: 'cosine', params: VISUAL_HNSW_PARAMS, file: 'visual.hnsw' },
};

export type HnswIndex = InstanceType<typeof hnswlib.HierarchicalNSW>;

/** A segment's graph as a generation places it. */
export interface SegmentGraph {
  id: string;
  firstRow: number;
  rows: number;
  /** Points in the graph. */
  points: number;
  index: HnswIndex;
  /** Labels marked deleted in `index` (masked rows); shared by every generation holding the graph. */
  marked: Set<number>;
}

export interface LoadedGraphs {
  dim: number;
  segments: SegmentGraph[];
}

/** Where a segment's graph file is, and what the generation says of it. */
export interface GraphSource {
  id: string;
  dir: string;
  firstRow: number;
  rows: number;
  points: number;
}

/** A segment's graph file, read (a graph of no points is not read: nothing to search). */
export function readGraph(name: GraphName, dim: number, dir: string, points: number): HnswIndex | null {
  if (points === 0) return null;
  const index = new hnswlib.HierarchicalNSW(GRAPHS[name].space, dim);
  index.readIndexSync(path.join(dir, GRAPHS[name].file));
  return index;
}

/** Mark the rows of `masked` (global rows) inside the segment deleted in its graph, once each. */
function markMasked(g: SegmentGraph, masked: ArrayLike<number>): void {
  let have: Set<number> | null = null;
  for (let i = 0; i < masked.length; i++) {
    const local = masked[i]! - g.firstRow;
    if (local < 0 || local >= g.rows || g.marked.has(local)) continue;
    // A row without a vector never was a point.
    have ??= new Set(g.index.getIdsList());
    if (!have.has(local)) continue;
    g.index.markDelete(local);
    g.marked.add(local);
  }
}

/**
 * Every segment's graph, deleted rows marked. `cached` lends graphs already in memory by segment id
 * (a segment's files never change, so another generation's loaded graph of it is the same graph;
 * deletions are final, so its marks only grow).
 */
export function loadGraphs(
  name: GraphName,
  dim: number,
  sources: readonly GraphSource[],
  masked: ArrayLike<number>,
  cached: (id: string) => SegmentGraph | undefined = () => undefined,
): LoadedGraphs {
  const segments: SegmentGraph[] = [];
  for (const s of sources) {
    const held = cached(s.id);
    const index = held?.index ?? readGraph(name, dim, s.dir, s.points);
    if (!index) continue;
    const g: SegmentGraph = { id: s.id, firstRow: s.firstRow, rows: s.rows, points: s.points, index, marked: held?.marked ?? new Set() };
    markMasked(g, masked);
    segments.push(g);
  }
  return { dim, segments };
}

/**
 * The k nearest rows with row >= `start` across the segments (similarity = 1 - distance, i.e. the
 * inner product or the cosine), best first, ties by row. `ef` is the search breadth per segment.
 */
export function searchGraphs(set: LoadedGraphs, query: Float32Array | number[], k: number, ef: number, start = 0): Neighbour[] {
  const q = Array.isArray(query) ? query : Array.from(query);
  const out: Neighbour[] = [];
  for (const s of set.segments) {
    const live = s.points - s.marked.size;
    if (live <= 0 || s.firstRow + s.rows <= start) continue;
    const kk = Math.min(k, live);
    s.index.setEf(Math.max(ef, kk));
    const from = start - s.firstRow;
    const res = from <= 0 ? s.index.searchKnn(q, kk) : s.index.searchKnn(q, kk, (label: number) => label >= from);
    res.neighbors.forEach((label, i) => out.push({ row: s.firstRow + label, sim: 1 - res.distances[i]! }));
  }
  out.sort((a, b) => b.sim - a.sim || a.row - b.row);
  return out.slice(0, k);
}

export function graphPoints(set: LoadedGraphs): number {
  return set.segments.reduce((a, s) => a + s.points - s.marked.size, 0);
}
