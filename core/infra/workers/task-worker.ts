// The worker side of task-pool.ts: a worker thread answers each task message with the handler's
// result (and the buffers to transfer), or with the error's message.
import { parentPort, type TransferListItem } from 'node:worker_threads';

export type TaskReply<R> = { result: R } | { error: string };

export function answerTasks<T, R>(
  handler: (task: T) => Promise<{ result: R; transfer?: TransferListItem[] }> | { result: R; transfer?: TransferListItem[] },
): void {
  const port = parentPort;
  if (!port) throw new Error('answerTasks() runs in a worker thread');
  port.on('message', (task: T) => {
    Promise.resolve()
      .then(() => handler(task))
      .then(
        ({ result, transfer }) => port.postMessage({ result } satisfies TaskReply<R>, transfer ?? []),
        (err: unknown) =>
          port.postMessage({ error: err instanceof Error ? (err.stack ?? err.message) : String(err) } satisfies TaskReply<R>),
      );
  });
}
