// The task queue when replicas share PostgreSQL: pg-boss (its schema pgboss beside ours). Every
// replica works the queue `concurrency` tasks at a time; a task is delivered to one of them, and
// delivered again (up to `attempts` runs) when its run fails or outlives `expireSeconds`, which is
// how a task whose replica died is taken over. Its owner makes a second delivery harmless (the job
// runner leaves a finished job as it is; the outbox attempts an event one turn at a time).
// A task's payload in pg-boss keeps its stored name: { jobId: <task> } (tasks queued before stay readable).
import PgBoss from 'pg-boss';
import type { SqlExecutor, TaskQueue } from './task-queue.ts';

interface PgTaskQueueOptions {
  databaseUrl: string;
  /** pg-boss's queue name: 'analysis-jobs', 'webhook-deliveries'. */
  queue: string;
  concurrency: number;
  /** Runs of a task at most (the first and the retries). */
  attempts: number;
  /** A run not finished after this long is taken for dead and the task delivered again. */
  expireSeconds: number;
  onError: (err: Error) => void;
}

export class PgTaskQueue implements TaskQueue {
  private boss: PgBoss | null = null;
  /** The start in progress: a close that comes before it ends waits for it, then stops what it started. */
  private starting: Promise<void> | null = null;

  constructor(private readonly o: PgTaskQueueOptions) {}

  start(run: (taskId: string) => Promise<void>): Promise<void> {
    this.starting = this.startBoss(run);
    return this.starting;
  }

  private async startBoss(run: (taskId: string) => Promise<void>): Promise<void> {
    const boss = new PgBoss({
      connectionString: this.o.databaseUrl,
      schema: 'pgboss',
      max: 4,
      application_name: 'content-intelligence queue',
      // Expired runs are found by pg-boss's maintenance (one replica at a time does it): often
      // enough that a dead replica's task runs again within about a third more than its expiry.
      maintenanceIntervalSeconds: Math.max(1, Math.min(60, Math.ceil(this.o.expireSeconds / 3))),
    });
    boss.on('error', (err: Error) => this.o.onError(err));
    await boss.start();
    const queue = this.o.queue;
    await boss.createQueue(queue, { name: queue, retryLimit: this.o.attempts - 1, retryDelay: 1, expireInSeconds: this.o.expireSeconds });
    for (let i = 0; i < this.o.concurrency; i++) {
      let worker = '';
      worker = await boss.work<{ jobId: string }>(queue, { batchSize: 1, pollingIntervalSeconds: 0.5 }, async ([task]) => {
        try {
          await run(task!.data.jobId);
        } finally {
          // A worker that just ran a task looks for the next at once, not after its polling interval:
          // otherwise a backlog drains at one task per worker per half second (1,000 webhooks took 32 s).
          boss.notifyWorker(worker);
        }
      });
    }
    this.boss = boss;
  }

  async enqueue(taskId: string, at?: Date): Promise<void> {
    if (!this.boss) throw new Error('the task queue is not started');
    await this.boss.send(this.o.queue, { jobId: taskId }, at ? { startAfter: at } : {});
  }

  async enqueueIn(db: SqlExecutor, taskId: string, at?: Date): Promise<void> {
    if (!this.boss) throw new Error('the task queue is not started');
    await this.boss.send(this.o.queue, { jobId: taskId }, { db: db as PgBoss.Db, ...(at ? { startAfter: at } : {}) });
  }

  /** pg-boss's states run created, retry, active, completed...: "before active" is what waits. */
  async depth(): Promise<{ queued: number; running: number }> {
    if (!this.boss) return { queued: 0, running: 0 };
    const queued = await this.boss.getQueueSize(this.o.queue, { before: 'active' });
    const upToActive = await this.boss.getQueueSize(this.o.queue, { before: 'completed' });
    return { queued, running: upToActive - queued };
  }

  /** Kept in PostgreSQL, bounded by its disk: no bound here (the in-memory queue has one). */
  hasRoom(): boolean {
    return true;
  }

  /** Workers stop taking tasks; the running ones finish (pg-boss waits for them). */
  async close(): Promise<void> {
    // Closed while starting: without this wait the start would finish afterwards and leave its
    // workers polling and its pool open (a process that does not exit, a replica taking tasks).
    await this.starting?.catch(() => undefined);
    this.starting = null;
    await this.boss?.stop({ graceful: true, wait: true, timeout: 30_000 });
    this.boss = null;
  }
}
