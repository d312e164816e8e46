// Which job runs next, and where: JOB_CONCURRENCY at a time. In one process (the default) a
// queue in memory, filled again from the job files at a start (job-book.ts); with DATABASE_URL
// pg-boss on the same PostgreSQL (pg-job-queue.ts): any replica takes the next job, and a job
// whose replica died is taken again once its run expires.
/** Somewhere SQL runs: a connection inside a transaction (pg-boss's own shape for it). */
export interface SqlExecutor {
  executeSql(text: string, values: unknown[]): Promise<{ rows: unknown[] }>;
}

export interface JobQueue {
  /** Start taking jobs; `run` must settle every job it is given (it never throws for a job's own failure). */
  start(run: (jobId: string) => Promise<void>): Promise<void>;
  /** Queue a job, to run now or not before `at` (a webhook's retry). */
  enqueue(jobId: string, at?: Date): Promise<void>;
  /** Queue inside the caller's transaction (a queue kept in PostgreSQL only). */
  enqueueIn?(db: SqlExecutor, jobId: string, at?: Date): Promise<void>;
  /** Jobs waiting and being run (/metrics): this process's in memory, every replica's with pg-boss. */
  depth(): Promise<{ queued: number; running: number }>;
  /** No new jobs start; resolves once the running ones finished. */
  close(): Promise<void>;
}

export class MemoryJobQueue implements JobQueue {
  private readonly queue: string[] = [];
  private readonly active = new Set<Promise<void>>();
  /** Jobs queued for later: their timers, cleared at close (a restart queues them again from their book). */
  private readonly later = new Set<NodeJS.Timeout>();
  private run: ((jobId: string) => Promise<void>) | null = null;
  private closed = false;

  constructor(
    private readonly concurrency: number,
    private readonly onError: (jobId: string, err: Error) => void,
  ) {}

  async start(run: (jobId: string) => Promise<void>): Promise<void> {
    this.run = run;
    this.pump();
  }

  async enqueue(jobId: string, at?: Date): Promise<void> {
    // Closed: nothing more runs here (a timer set now would hold the process up to its time); the
    // book keeps the job and the next start queues it again.
    if (this.closed) return;
    const wait = at ? at.getTime() - Date.now() : 0;
    if (wait > 0) {
      const timer = setTimeout(() => {
        this.later.delete(timer);
        this.queue.push(jobId);
        this.pump();
      }, wait);
      this.later.add(timer);
      return;
    }
    this.queue.push(jobId);
    this.pump();
  }

  async depth(): Promise<{ queued: number; running: number }> {
    return { queued: this.queue.length, running: this.active.size };
  }

  private pump(): void {
    while (this.run && !this.closed && this.active.size < this.concurrency && this.queue.length > 0) {
      const jobId = this.queue.shift()!;
      const p: Promise<void> = this.run(jobId)
        .catch((err: Error) => this.onError(jobId, err))
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
