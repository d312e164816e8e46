// The messages between the features stage and its embedding workers (embed-worker.ts): a range
// of rows' term hashes in, their text vectors out. The fitted model reaches each worker once, as
// the embedder file the stage has just saved (so workers embed exactly as queries will).
import type { EmbedderParams } from '../../core/vectors/embedder.ts';

export interface EmbedWorkerData {
  modelFile: string;
}

/** Rows first..first+n-1; row i's hashes are hashes[offsets[i] .. offsets[i+1]). */
export interface EmbedTask {
  first: number;
  hashes: Uint32Array;
  offsets: Uint32Array;
}

export interface EmbedResult {
  first: number;
  vectors: Float32Array;
}

/** The fit, in its own worker thread (fit-worker.ts) so the visual features run beside it: every row's hashes in, the model saved to `modelFile`. */
export interface FitTask {
  hashes: Uint32Array;
  offsets: Uint32Array;
  params: EmbedderParams;
  modelFile: string;
}

export interface FitResult {
  version: string;
  dim: number;
}
