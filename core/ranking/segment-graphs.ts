// The HNSW graphs of a generation: one hnswlib graph per time segment (core/snapshots/segments.ts), labels =
// rows of the segment; a row's global row is the segment's first row + its label.
//
// Why per segment: hnswlib-node inserts on one thread, and the graph of a million posts takes
// minutes to build. Segments build side by side in worker threads on a full run; an incremental run
// reuses the sealed segments' graphs untouched and extends the head's by the new points only. A
// window search reads the segments inside the window whole and filters only the one the window's
// start falls into (Lucene, Qdrant and Milvus search segments the same way). Rows of posts deleted
// after their segment was built are marked deleted in the loaded graph (hnswlib markDelete): the
// search walks past them and never returns them.
//
// Window tails: a filtered search is cheap while the window keeps most of a segment's rows, and
// not when it keeps few: hnswlib keeps walking until it holds ef rows that pass the filter, and
// posts cluster in time, so the query's neighbourhood is mostly older rows the filter rejects (at
// 1M posts the 90-day window keeps 40% of its first segment, and a frequent-tag query there walked
// 28,000 nodes in 22 ms, against 1-3 ms for any window that starts at a segment boundary). So
// where a window keeps less than TAIL_SHARE of a segment, the index stage also builds a graph of
// the segment's rows from the window's start on (labels the same local rows), kept while later
// windows (the starts move forward run by run) still keep TAIL_SHARE of it.
//   segments/<id>/text.hnsw    space ip (inner product of unit vectors = cosine), HNSW_PARAMS
//   segments/<id>/visual.hnsw  space cosine, VISUAL_HNSW_PARAMS
//   segments/<id>/text-from-<local row>.hnsw  a window tail of the text graph (tailFile)
import path from 'node:path';
import hnswlib from 'hnswlib-node';
import type { SegmentTail } from '../snapshots/segments.ts';
import { shuffledOrder } from '../stats/seeded-random.ts';

type HnswSpace = 'ip' | 'cosine';
interface HnswParams {
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
const HNSW_PARAMS: HnswParams = { m: 32, efConstruction: 200, seed: 42 };
// The visual graph answers "which posts look like this one" (lookalikes, not the ranked search):
// hnswlib's defaults suffice, at a third of the text graph's build cost.
const VISUAL_HNSW_PARAMS: HnswParams = { m: 16, efConstruction: 100, seed: 42 };

export const GRAPHS: Record<GraphName, { space: HnswSpace; params: HnswParams; file: string }> = {
  text: { space: 'ip', params: HNSW_PARAMS, file: 'text.hnsw' },
  visual: { space: 'cosine', params: VISUAL_HNSW_PARAMS, file: 'visual.hnsw' },
};

type HnswIndex = InstanceType<typeof hnswlib.HierarchicalNSW>;

/** A window's part of a segment kept at least this share of the graph it searches, or a tail is built. */
export const TAIL_SHARE = 0.5;

/** A window tail's file: the text graph of a segment's rows from local row `from` on. */
export function tailFile(from: number): string {
  return `text-from-${from}.hnsw`;
}

/** A graph over rows of one segment: labels = local rows; `marked` = labels marked deleted (masked rows). */
interface MarkedGraph {
  points: number;
  index: HnswIndex;
  /** Shared by every generation holding the graph (a segment's files never change, deletions only grow). */
  marked: Set<number>;
}

/** A segment's window tail: its graph of rows [from, rows). */
interface TailGraph extends MarkedGraph {
  from: number;
}

/** A segment's graph as a generation places it. */
export interface SegmentGraph extends MarkedGraph {
  id: string;
  firstRow: number;
  rows: number;
  /** Window tails, by ascending `from`. */
  tails: TailGraph[];
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
  /** Window tails (text graphs only): first local row and points of each. */
  tails?: readonly SegmentTail[];
}

/**
 * Add the rows of `vectors` (row-major, `dim` wide; all-zero rows have no vector and are left out)
 * to a graph, labelled firstLabel + their position; returns the points added. They go in in a
 * seeded random order, not in row (time) order: a story's posts arrive in a burst of near
 * neighbours, and inserted one after another they linked mostly among themselves, so the graph
 * reached the burst through few edges and a search from the entry point could miss it whole (at
 * 100k posts, recall@200 of window-all queries against an exact scan: 0.88 with 8 of 98 queries
 * under 0.5 in row order; 0.95 with 1 shuffled). The labels stay the rows, so no answer changes meaning.
 */
export function addPoints(index: HnswIndex, vectors: Float32Array, dim: number, firstLabel: number, seed: number): number {
  let points = 0;
  for (const i of shuffledOrder(vectors.length / dim, seed)) {
    const v = vectors.subarray(i * dim, (i + 1) * dim);
    if (!v.some((x) => x !== 0)) continue;
    index.addPoint(Array.from(v), firstLabel + i);
    points++;
  }
  return points;
}

/** A segment's graph file, read (a graph of no points is not read: nothing to search). */
function readGraph(name: GraphName, dim: number, dir: string, points: number, file = GRAPHS[name].file): HnswIndex | null {
  if (points === 0) return null;
  const index = new hnswlib.HierarchicalNSW(GRAPHS[name].space, dim);
  index.readIndexSync(path.join(dir, file));
  return index;
}

/** Mark the rows of `masked` (global rows) in local rows [from, rows) deleted in the graph, once each. */
function markMasked(g: MarkedGraph, firstRow: number, from: number, rows: number, masked: ArrayLike<number>): void {
  let have: Set<number> | null = null;
  for (let i = 0; i < masked.length; i++) {
    const local = masked[i]! - firstRow;
    if (local < from || local >= rows || g.marked.has(local)) continue;
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
    const tails: TailGraph[] = [];
    for (const t of [...(s.tails ?? [])].sort((a, b) => a.from - b.from)) {
      const heldTail = held?.tails.find((x) => x.from === t.from);
      const tailIndex = heldTail?.index ?? readGraph(name, dim, s.dir, t.points, tailFile(t.from));
      if (!tailIndex) continue;
      const tail: TailGraph = { from: t.from, points: t.points, index: tailIndex, marked: heldTail?.marked ?? new Set() };
      markMasked(tail, s.firstRow, t.from, s.rows, masked);
      tails.push(tail);
    }
    const g: SegmentGraph = {
      id: s.id,
      firstRow: s.firstRow,
      rows: s.rows,
      points: s.points,
      index,
      marked: held?.marked ?? new Set(),
      tails,
    };
    markMasked(g, s.firstRow, 0, s.rows, masked);
    segments.push(g);
  }
  return { dim, segments };
}

/** The graph that holds a segment's rows from local row `from` on: its latest tail starting at or before it, else its own. */
function graphFrom(s: SegmentGraph, from: number): { g: MarkedGraph; first: number } {
  for (let i = s.tails.length - 1; i >= 0; i--) if (s.tails[i]!.from <= from) return { g: s.tails[i]!, first: s.tails[i]!.from };
  return { g: s, first: 0 };
}

/**
 * The k nearest rows with row >= `start` across the segments (similarity = 1 - distance, i.e. the
 * inner product or the cosine), best first, ties by row. `ef` is the search breadth per segment.
 * The segment the window starts in is searched in its window tail where it has one.
 */
export function searchGraphs(set: LoadedGraphs, query: Float32Array | number[], k: number, ef: number, start = 0): Neighbour[] {
  const q = Array.isArray(query) ? query : Array.from(query);
  const out: Neighbour[] = [];
  for (const s of set.segments) {
    if (s.firstRow + s.rows <= start) continue;
    const from = start - s.firstRow;
    const { g, first } = graphFrom(s, from);
    const live = g.points - g.marked.size;
    if (live <= 0) continue;
    const kk = Math.min(k, live);
    g.index.setEf(Math.max(ef, kk));
    const res = from <= first ? g.index.searchKnn(q, kk) : g.index.searchKnn(q, kk, (label: number) => label >= from);
    res.neighbors.forEach((label, i) => out.push({ row: s.firstRow + label, sim: 1 - res.distances[i]! }));
  }
  out.sort((a, b) => b.sim - a.sim || a.row - b.row);
  return out.slice(0, k);
}

export function graphPoints(set: LoadedGraphs): number {
  return set.segments.reduce((a, s) => a + s.points - s.marked.size, 0);
}
