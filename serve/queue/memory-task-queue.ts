// The task queue of one process: in memory, `concurrency` tasks at a time, at most `capacity`
// waiting (queued now or for later) before hasRoom() says no. Its owner keeps every task it
// queues, so a restart queues them again.
import type { TaskQueue } from './task-queue.ts';

export class MemoryTaskQueue implements TaskQueue {
  private readonly queue: string[] = [];
  private readonly active = new Set<Promise<void>>();
  /** Tasks queued for later: their timers, cleared at close (a restart queues them again from their owner's store). */
  private readonly later = new Set<NodeJS.Timeout>();
  private run: ((taskId: string) => Promise<void>) | null = null;
  private closed = false;

  constructor(
    private readonly concurrency: number,
    private readonly onError: (taskId: string, err: Error) => void,
    /** Tasks waiting at most before hasRoom() is false (the bound its owner enforces at admission). */
    private readonly capacity = Number.POSITIVE_INFINITY,
  ) {}

  async start(run: (taskId: string) => Promise<void>): Promise<void> {
    this.run = run;
    this.pump();
  }

  async enqueue(taskId: string, at?: Date): Promise<void> {
    // Closed: nothing more runs here (a timer set now would hold the process up to its time); the
    // owner keeps the task and the next start queues it again.
    if (this.closed) return;
    const wait = at ? at.getTime() - Date.now() : 0;
    if (wait > 0) {
      const timer = setTimeout(() => {
        this.later.delete(timer);
        this.queue.push(taskId);
        this.pump();
      }, wait);
      this.later.add(timer);
      return;
    }
    this.queue.push(taskId);
    this.pump();
  }

  hasRoom(): boolean {
    return this.queue.length + this.later.size < this.capacity;
  }

  async depth(): Promise<{ queued: number; running: number }> {
    return { queued: this.queue.length, running: this.active.size };
  }

  private pump(): void {
    while (this.run && !this.closed && this.active.size < this.concurrency && this.queue.length > 0) {
      const taskId = this.queue.shift()!;
      const p: Promise<void> = this.run(taskId)
        .catch((err: Error) => this.onError(taskId, err))
        .finally(() => {
          this.active.delete(p);
          this.pump();
        });
      this.active.add(p);
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const t of this.later) clearTimeout(t);
    this.later.clear();
    await Promise.all(this.active);
  }
}
