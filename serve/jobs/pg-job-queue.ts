// Which job runs next when replicas share PostgreSQL: pg-boss (its schema pgboss beside ours).
// Every replica works the queue JOB_CONCURRENCY jobs at a time; a job is delivered to one of
// them, and delivered again (up to MAX_ATTEMPTS runs) when its run fails or outlives
// JOB_EXPIRE_SECONDS, which is how a job whose replica died is taken over. The runner makes a
// second delivery harmless: a finished job is left as it is, a charge is made once.
import pg from 'pg';
import PgBoss from 'pg-boss';
import type { JobQueue, SqlExecutor } from './job-queue.ts';

/** How long close() waits for runs in flight, pg-boss's stop included. */
const STOP_TIMEOUT_MS = 30_000;

interface BossQueueOptions {
  databaseUrl: string;
  /** pg-boss's queue name: 'analysis-jobs', 'webhook-deliveries'. */
  queue: string;
  concurrency: number;
  /** Runs of a job at most (the first and the retries). */
  attempts: number;
  /** A run not finished after this long is taken for dead and the job delivered again. */
  expireSeconds: number;
  onError: (err: Error) => void;
}

export class BossJobQueue implements JobQueue {
  private boss: PgBoss | null = null;
  /**
   * pg-boss's connections are ours, not its own pool: its stop() ends its pool at once, while a
   * worker may still be waiting for a connection (more workers than connections), and
   * node-postgres never answers a wait that an end() overtook: that worker's loop never ends, and
   * pg-boss's one-second check for it keeps the process alive. Ours ends once nothing uses it.
   */
  private pool: pg.Pool | null = null;
  /** Runs of `run` in progress. */
  private running = 0;
  /** The start in progress: a close that comes before it ends waits for it, then stops what it started. */
  private starting: Promise<void> | null = null;

  constructor(private readonly o: BossQueueOptions) {}

  start(run: (jobId: string) => Promise<void>): Promise<void> {
    this.starting = this.startBoss(run);
    return this.starting;
  }

  private async startBoss(run: (jobId: string) => Promise<void>): Promise<void> {
    const pool = new pg.Pool({ connectionString: this.o.databaseUrl, max: 4, application_name: 'content-intelligence queue' });
    pool.on('error', (err: Error) => this.o.onError(err));
    this.pool = pool;
    // As pg-boss's own pool does once closed: a late call (a run outliving the stop) gets nothing.
    const db = { executeSql: (text: string, values: unknown[]) => (pool.ending ? undefined : pool.query(text, values)) };
    const boss = new PgBoss({
      db: db as PgBoss.Db,
      schema: 'pgboss',
      // Expired runs are found by pg-boss's maintenance (one replica at a time does it): often
      // enough that a dead replica's job runs again within about a third more than its expiry.
      maintenanceIntervalSeconds: Math.max(1, Math.min(60, Math.ceil(this.o.expireSeconds / 3))),
    });
    boss.on('error', (err: Error) => this.o.onError(err));
    await boss.start();
    const queue = this.o.queue;
    await boss.createQueue(queue, { name: queue, retryLimit: this.o.attempts - 1, retryDelay: 1, expireInSeconds: this.o.expireSeconds });
    for (let i = 0; i < this.o.concurrency; i++) {
      let worker = '';
      worker = await boss.work<{ jobId: string }>(queue, { batchSize: 1, pollingIntervalSeconds: 0.5 }, async ([job]) => {
        this.running++;
        try {
          await run(job!.data.jobId);
        } finally {
          this.running--;
          // A worker that just ran a job looks for the next at once, not after its polling interval:
          // otherwise a backlog drains at one job per worker per half second (1,000 webhooks took 32 s).
          boss.notifyWorker(worker);
        }
      });
    }
    this.boss = boss;
  }

  async enqueue(jobId: string, at?: Date): Promise<void> {
    if (!this.boss) throw new Error('the job queue is not started');
    await this.boss.send(this.o.queue, { jobId }, at ? { startAfter: at } : {});
  }

  async enqueueIn(db: SqlExecutor, jobId: string, at?: Date): Promise<void> {
    if (!this.boss) throw new Error('the job queue is not started');
    await this.boss.send(this.o.queue, { jobId }, { db: db as PgBoss.Db, ...(at ? { startAfter: at } : {}) });
  }

  /** pg-boss's states run created, retry, active, completed...: "before active" is what waits. */
  async depth(): Promise<{ queued: number; running: number }> {
    if (!this.boss) return { queued: 0, running: 0 };
    const queued = await this.boss.getQueueSize(this.o.queue, { before: 'active' });
    const upToActive = await this.boss.getQueueSize(this.o.queue, { before: 'completed' });
    return { queued, running: upToActive - queued };
  }

  /** Workers stop taking jobs; the running ones finish (pg-boss waits for them). */
  async close(): Promise<void> {
    // Closed while starting: without this wait the start would finish afterwards and leave its
    // workers polling and its pool open (a process that does not exit, a replica taking jobs).
    await this.starting?.catch(() => undefined);
    this.starting = null;
    const end = Date.now() + STOP_TIMEOUT_MS;
    await this.boss?.stop({ graceful: true, wait: true, timeout: STOP_TIMEOUT_MS });
    this.boss = null;
    const pool = this.pool;
    if (!pool) return;
    this.pool = null;
    // The workers that were waiting for a connection get it, see they are stopped and leave (one
    // may have fetched a job: its run ends first). Checked from a timer, so that every step a
    // finished query or run leads to has been taken: quiet then is quiet for good.
    const quiet = () => this.running === 0 && pool.waitingCount === 0 && pool.idleCount === pool.totalCount;
    do await new Promise((resolve) => setTimeout(resolve, 20));
    while (!quiet() && Date.now() < end);
    await pool.end();
  }
}
