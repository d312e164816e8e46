// Worker thread of the features stage: embeds a range of rows with the fitted text embedder.
import { workerData } from 'node:worker_threads';
import { embedHashes, loadEmbedder } from '../../core/vectors/embedder.ts';
import { answerTasks } from '../../core/infra/workers/task-worker.ts';
import type { EmbedResult, EmbedTask, EmbedWorkerData } from './embed-task.ts';

const model = await loadEmbedder((workerData as EmbedWorkerData).modelFile);
const dim = model.params.dim;

answerTasks<EmbedTask, EmbedResult>((t) => {
  const n = t.offsets.length - 1;
  const vectors = new Float32Array(n * dim);
  for (let i = 0; i < n; i++)
    embedHashes(model, t.hashes.subarray(t.offsets[i]!, t.offsets[i + 1]!), vectors.subarray(i * dim, (i + 1) * dim));
  return { result: { first: t.first, vectors }, transfer: [vectors.buffer] };
});
