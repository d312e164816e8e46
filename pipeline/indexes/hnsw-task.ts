// The messages between the index stage and its HNSW workers (hnsw-worker.ts).
import type { HnswParams, HnswSpace } from '../../core/ranking/hnsw-shards.ts';

/** Build one shard's graph from rows [firstRow, endRow) of a rows x dim float32 file; all-zero rows are left out. */
export interface BuildTask {
  kind: 'build';
  vectorsFile: string;
  dim: number;
  firstRow: number;
  endRow: number;
  space: HnswSpace;
  params: HnswParams;
  out: string;
}
export interface BuildResult {
  points: number;
  ms: number;
}

/**
 * Each row of [firstRow, endRow)'s nearest neighbours across every shard of the set: the best
 * similarity to an earlier row (novelty) and the similarities of its `k` nearest (saturation).
 */
export interface NeighbourTask {
  kind: 'neighbours';
  dir: string;
  name: string;
  vectorsFile: string;
  firstRow: number;
  endRow: number;
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
