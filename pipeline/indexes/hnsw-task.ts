// The messages between the index stage and its HNSW workers (hnsw-worker.ts).
import type { GraphName, GraphSource } from '../../core/ranking/segment-graphs.ts';

/**
 * Build a segment's graph from rows [0, rows) of a rows x dim float32 file (all-zero rows left out),
 * or, with a base, extend the base's graph (its first base.rows rows) by rows [base.rows, rows).
 */
export interface BuildTask {
  kind: 'build';
  name: GraphName;
  vectorsFile: string;
  dim: number;
  rows: number;
  base: { file: string; rows: number } | null;
  out: string;
}
export interface BuildResult {
  points: number;
  ms: number;
}

/**
 * The nearest neighbours of some rows of one segment (`locals`, rows of its vectors file; global
 * row = firstRow + local) across every segment of the generation: each one's best similarity to an
 * earlier row (novelty) and the similarities of its `k` nearest (saturation).
 */
export interface NeighbourTask {
  kind: 'neighbours';
  sources: GraphSource[];
  /** Global rows masked in the generation (never neighbours). */
  masked: Uint32Array;
  dim: number;
  vectorsFile: string;
  firstRow: number;
  locals: Uint32Array;
  k: number;
  ef: number;
}
export interface NeighbourResult {
  /** Per row: the highest similarity to an earlier row (NaN: none found), and -1 when the row has no vector. */
  bestEarlier: Float64Array;
  /** Per row: the k nearest other rows' similarities, row-major rows x k (NaN where fewer). */
  nearest: Float64Array;
}

export type HnswTask = BuildTask | NeighbourTask;
export type HnswResult = BuildResult | NeighbourResult;
