// The embedder of the features stage: fitted on every row's term hashes in its own worker thread
// (fit-worker.ts) on a full run, so the visual features run beside it, or kept from the served
// generation on an incremental run (the refit rule: refit-rule.ts); then the computed rows embedded
// with it in worker threads (embed-worker.ts; on this thread when they are few), from the saved
// file queries will load too.
import os from 'node:os';
import { embedHashes, loadEmbedder, type EmbedderParams } from '../../core/vectors/embedder.ts';
import { TaskPool } from '../../core/infra/workers/task-pool.ts';
import type { StageContext } from '../context/stage-context.ts';
import { StageAborted } from '../context/stage-context.ts';
import type { EmbedResult, EmbedTask, EmbedWorkerData, FitResult, FitTask } from './embed-task.ts';

const EMBED_ROWS = 50_000;

/** Row i's hashes as one flat array and its offsets. */
function flatten(
  docHashes: readonly Uint32Array[],
  first = 0,
  end = docHashes.length,
): { hashes: Uint32Array<ArrayBuffer>; offsets: Uint32Array<ArrayBuffer> } {
  const offsets = new Uint32Array(end - first + 1);
  for (let r = first; r < end; r++) offsets[r - first + 1] = offsets[r - first]! + docHashes[r]!.length;
  const hashes = new Uint32Array(offsets[end - first]!);
  for (let r = first; r < end; r++) hashes.set(docHashes[r]!, offsets[r - first]!);
  return { hashes, offsets };
}

/** The embedder fitted on every row's hashes in a worker thread, saved to `modelFile`; stopped when `signal` aborts. */
export async function fitInWorker(
  docHashes: Uint32Array[],
  params: EmbedderParams,
  modelFile: string,
  signal: AbortSignal,
): Promise<FitResult> {
  const { hashes, offsets } = flatten(docHashes);
  const pool = new TaskPool<FitTask, FitResult>(new URL('./fit-worker.ts', import.meta.url), { threads: 1 });
  // Stopped (the worker terminated) when the stage is abandoned or the visual features fail.
  const stopped = new Promise<never>((_, reject) => {
    if (signal.aborted) reject(new StageAborted('features'));
    signal.addEventListener('abort', () => reject(new StageAborted('features')), { once: true });
  });
  try {
    return await Promise.race([pool.run({ hashes, offsets, params, modelFile }, [hashes.buffer, offsets.buffer]), stopped]);
  } finally {
    await pool.close();
  }
}

/** Each row's text vector (rows x dim, in the order of `docHashes`), a range of rows a task; `progress` gets the rows done. */
export async function embedAll(
  ctx: StageContext,
  modelFile: string,
  docHashes: Uint32Array[],
  dim: number,
  progress: (done: number) => void,
): Promise<Float32Array> {
  const rows = docHashes.length;
  const vectors = new Float32Array(rows * dim);
  if (rows === 0) return vectors;
  if (rows <= EMBED_ROWS) {
    // One task's worth (an hourly run's new posts): a worker's start costs more than the work.
    const model = await loadEmbedder(modelFile);
    for (let i = 0; i < rows; i++) embedHashes(model, docHashes[i]!, vectors.subarray(i * dim, (i + 1) * dim));
    progress(rows);
    return vectors;
  }
  const pool = new TaskPool<EmbedTask, EmbedResult>(new URL('./embed-worker.ts', import.meta.url), {
    threads: Math.min(ctx.config.PIPELINE_THREADS ?? os.availableParallelism(), Math.ceil(rows / EMBED_ROWS)),
    workerData: { modelFile } satisfies EmbedWorkerData,
  });
  let done = 0;
  try {
    const tasks: Array<Promise<void>> = [];
    for (let first = 0; first < rows; first += EMBED_ROWS) {
      if (ctx.signal.aborted) throw new StageAborted('features');
      const end = Math.min(rows, first + EMBED_ROWS);
      const { hashes, offsets } = flatten(docHashes, first, end);
      tasks.push(
        pool.run({ first, hashes, offsets }, [hashes.buffer, offsets.buffer]).then((res) => {
          vectors.set(res.vectors, res.first * dim);
          progress((done += end - first));
        }),
      );
    }
    await Promise.all(tasks);
  } finally {
    await pool.close();
  }
  return vectors;
}
