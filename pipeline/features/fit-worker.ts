// Worker thread of the features stage: fits the text embedder on every row's term hashes and saves
// it, while the stage's main thread drives the visual features (the fit is one long synchronous
// computation that would otherwise keep the visual workers waiting for their next task).
import { fitEmbedder, saveEmbedder } from '../../core/vectors/embedder.ts';
import { answerTasks } from '../../core/infra/workers/task-worker.ts';
import type { FitResult, FitTask } from './embed-task.ts';

answerTasks<FitTask, FitResult>(async (t) => {
  const docs = Array.from({ length: t.offsets.length - 1 }, (_, i) => t.hashes.subarray(t.offsets[i]!, t.offsets[i + 1]!));
  const model = fitEmbedder(docs, t.params);
  await saveEmbedder(model, t.modelFile);
  return { result: { version: model.version, dim: model.params.dim } };
});
