// A fixed pool of worker threads that run one module's task handler (see task-worker.ts): tasks
// queue and go to the next idle worker; results come back as promises. The work here is pure
// computation over data the pipeline owns (text analysis, graph building), so a worker that
// errors or exits fails every pending task and the stage with it: there is no item to blame and
// skip, unlike the visual pool, whose input files may be broken.
import os from 'node:os';
import type { TransferListItem, Worker } from 'node:worker_threads';
import { spawnTsWorker } from './spawn.ts';
import type { TaskReply } from './task-worker.ts';

interface Pending<R> {
  task: unknown;
  transfer: TransferListItem[];
  resolve: (r: R) => void;
  reject: (e: Error) => void;
}
interface Lane {
  worker: Worker;
  busy: Pending<unknown> | null;
}

export class TaskPool<T, R> {
  readonly size: number;
  private readonly lanes: Lane[] = [];
  private readonly queue: Array<Pending<unknown>> = [];
  private failed: Error | null = null;
  private closed = false;

  /** `entry` is a module calling answerTasks(); `workerData` reaches every worker once. */
  constructor(entry: URL, opts: { threads?: number; workerData?: unknown } = {}) {
    this.size = Math.max(1, Math.floor(opts.threads ?? os.availableParallelism()));
    for (let i = 0; i < this.size; i++) {
      const lane: Lane = { worker: spawnTsWorker(entry, opts.workerData), busy: null };
      lane.worker.on('message', (reply: TaskReply<R>) => {
        const p = lane.busy;
        lane.busy = null;
        if (!p) return;
        if ('error' in reply) p.reject(new Error(reply.error));
        else p.resolve(reply.result);
        this.pump();
      });
      lane.worker.on('error', (err) => this.fail(err));
      lane.worker.on('exit', (code) => {
        if (!this.closed) this.fail(new Error(`worker exited with code ${code}`));
      });
      this.lanes.push(lane);
    }
  }

  /** A worker died: every task fails from now on (a long-lived owner replaces the pool). */
  get broken(): boolean {
    return this.failed !== null;
  }

  /** Tasks queued or running: callers bound their memory by waiting while this is high. */
  get inFlight(): number {
    return this.queue.length + this.lanes.filter((l) => l.busy).length;
  }

  run(task: T, transfer: TransferListItem[] = []): Promise<R> {
    if (this.failed) return Promise.reject(this.failed);
    if (this.closed) return Promise.reject(new Error('task pool is closed'));
    return new Promise<R>((resolve, reject) => {
      this.queue.push({ task, transfer, resolve: resolve as (r: unknown) => void, reject });
      this.pump();
    });
  }

  private pump(): void {
    for (const lane of this.lanes) {
      if (lane.busy || this.queue.length === 0) continue;
      const p = this.queue.shift()!;
      lane.busy = p;
      lane.worker.postMessage(p.task, p.transfer);
    }
  }

  private fail(err: Error): void {
    if (this.failed) return;
    this.failed = new Error(`worker failed: ${err.message}`);
    for (const p of [...this.queue.splice(0), ...this.lanes.flatMap((l) => (l.busy ? [l.busy] : []))]) p.reject(this.failed);
    for (const l of this.lanes) l.busy = null;
    void this.close();
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await Promise.all(this.lanes.map((l) => l.worker.terminate()));
  }
}
