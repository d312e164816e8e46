// The messages between the index stage and its HNSW workers (hnsw-worker.ts).
import type { GraphName, GraphSource } from '../../core/ranking/segment-graphs.ts';

/**
 * Some rows of one segment (`locals`, rows of its vectors file; global row = firstRow + local)
 * whose nearest neighbours are wanted: each one's `k` nearest rows of the searched graphs.
 */
export interface NeighbourQuery {
  vectorsFile: string;
  firstRow: number;
  locals: Uint32Array;
  k: number;
  ef: number;
  /** Global rows masked in the generation (never neighbours). */
  masked: Uint32Array;
}

/** Per queried row, its k nearest in the searched graphs, best first (row -1 and sim NaN where fewer). */
export interface NeighbourLists {
  /** rows x k global rows. */
  rows: Int32Array;
  /** rows x k similarities. */
  sims: Float64Array;
  /** 1 where the queried row has no vector (nothing searched). */
  noVector: Uint8Array;
}

/**
 * Build a segment's graph from rows [0, rows) of a rows x dim float32 file (all-zero rows left out),
 * or, with a base, extend the base's graph (its first base.rows rows) by rows [base.rows, rows).
 * `from`: a window tail's first row (the graph holds rows [from, rows) only; default 0). With
 * `search`, the worker then searches the new graph for those rows while it holds it (the rows'
 * neighbours in their own segment: no second read of the graph).
 */
export interface BuildTask {
  kind: 'build';
  name: GraphName;
  vectorsFile: string;
  dim: number;
  rows: number;
  base: { file: string; rows: number } | null;
  from?: number;
  out: string;
  firstRow: number;
  search: NeighbourQuery | null;
}
export interface BuildResult {
  points: number;
  ms: number;
  lists: NeighbourLists | null;
}

/** The nearest neighbours of some rows of one segment in the graphs of `sources` (other segments). */
export interface NeighbourTask extends NeighbourQuery {
  kind: 'neighbours';
  sources: GraphSource[];
  dim: number;
}

export type HnswTask = BuildTask | NeighbourTask;
export type HnswResult = BuildResult | NeighbourLists;
