// The task queue when replicas share PostgreSQL: pg-boss (its schema pgboss beside ours). Every
// replica works the queue `concurrency` tasks at a time; a task is delivered to one of them, and
// delivered again (up to `attempts` runs) when its run fails or outlives `expireSeconds`, which is
// how a task whose replica died is taken over. Its owner makes a second delivery harmless (the job
// runner leaves a finished job as it is; the outbox attempts an event one turn at a time).
// A task's payload in pg-boss keeps its stored name: { jobId: <task> } (tasks queued before stay readable).
import { createRequire } from 'node:module';
import pg from 'pg';
import PgBoss from 'pg-boss';
import { isConnectionLoss } from '../../core/infra/postgres/connection-loss.ts';
import { withSetupLock } from '../../core/infra/postgres/setup-lock.ts';
import { CONNECT_TIMEOUT_MS, QUERY_TIMEOUT_MS } from '../../core/infra/postgres/pool.ts';
import type { SqlExecutor, TaskQueue } from './task-queue.ts';

/** pg-boss's SQL text (its package has no `exports` map: the file is reachable), to know its statements by. */
const bossPlans = createRequire(import.meta.url)('pg-boss/src/plans.js') as {
  completeJobs(schema: string): string;
  failJobsById(schema: string): string;
};

const SCHEMA = 'pgboss';
/** The statements pg-boss ends a run with (complete, fail): the ones written again until they land. */
const SETTLING = new Set([bossPlans.completeJobs(SCHEMA), bossPlans.failJobsById(SCHEMA)]);

/** How long close() waits for runs in flight, pg-boss's stop included. */
const STOP_TIMEOUT_MS = 30_000;

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
  /**
   * pg-boss's connections are ours, not its own pool: its stop() ends its pool at once, while a
   * worker may still be waiting for a connection (more workers than connections), and
   * node-postgres never answers a wait that an end() overtook: that worker's loop never ends, and
   * pg-boss's one-second check for it keeps the process alive. Ours ends once nothing uses it.
   */
  private pool: pg.Pool | null = null;
  /** Runs of `run` in progress. */
  private running = 0;
  /** An outage's first error was reported; quiet until a statement succeeds again. */
  private unreachable = false;
  private closing = false;
  /** The start in progress: a close that comes before it ends waits for it, then stops what it started. */
  private starting: Promise<void> | null = null;

  constructor(private readonly o: PgTaskQueueOptions) {}

  start(run: (taskId: string) => Promise<void>): Promise<void> {
    this.starting = this.startBoss(run);
    return this.starting;
  }

  private async startBoss(run: (taskId: string) => Promise<void>): Promise<void> {
    const pool = new pg.Pool({
      connectionString: this.o.databaseUrl,
      max: 4,
      application_name: 'content-intelligence queue',
      connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
      query_timeout: QUERY_TIMEOUT_MS,
      keepAlive: true,
    });
    pool.on('error', (err: Error) => this.reportError(err));
    this.pool = pool;
    const boss = new PgBoss({
      db: this.executor(pool) as PgBoss.Db,
      schema: SCHEMA,
      // Expired runs are found by pg-boss's maintenance (one replica at a time does it): often
      // enough that a dead replica's task runs again within about a third more than its expiry.
      maintenanceIntervalSeconds: Math.max(1, Math.min(60, Math.ceil(this.o.expireSeconds / 3))),
    });
    boss.on('error', (err: Error) => this.reportError(err));
    // pg-boss's schema and this queue made under the one setup lock: two replicas starting together
    // on a fresh database otherwise deadlock inside pg-boss's create_queue (its partition's DDL).
    await withSetupLock(pool, async () => {
      await boss.start();
      await boss.createQueue(this.o.queue, {
        name: this.o.queue,
        retryLimit: this.o.attempts - 1,
        retryDelay: 1,
        expireInSeconds: this.o.expireSeconds,
      });
    });
    const queue = this.o.queue;
    for (let i = 0; i < this.o.concurrency; i++) {
      let worker = '';
      worker = await boss.work<{ jobId: string }>(queue, { batchSize: 1, pollingIntervalSeconds: 0.5 }, async ([task]) => {
        this.running++;
        try {
          await run(task!.data.jobId);
        } finally {
          this.running--;
          // A worker that just ran a task looks for the next at once, not after its polling interval:
          // otherwise a backlog drains at one task per worker per half second (1,000 webhooks took 32 s).
          boss.notifyWorker(worker);
        }
      });
    }
    this.boss = boss;
  }

  /**
   * pg-boss's connection to SQL. As pg-boss's own pool does once closed, a late call (a run
   * outliving the stop) gets nothing. A task's completion or failure is written again until it
   * lands: pg-boss starts those writes without waiting for them, so one failed by an outage is
   * a rejection nobody handles (the process would exit), and the task would run again later.
   */
  private executor(pool: pg.Pool): SqlExecutor {
    const once = (text: string, values: unknown[]) =>
      pool.query(text, values).then((r) => {
        this.unreachable = false;
        return r;
      });
    return {
      executeSql: async (text: string, values: unknown[]) => {
        if (pool.ending) return undefined as never;
        if (!SETTLING.has(text)) return once(text, values);
        for (let wait = 250; ; wait = Math.min(wait * 2, 2_000)) {
          try {
            return await once(text, values);
          } catch (err) {
            if (!isConnectionLoss(err) || pool.ending || this.closing) {
              this.reportError(err as Error);
              return undefined as never;
            }
            this.reportError(err as Error);
            await new Promise((resolve) => setTimeout(resolve, wait));
          }
        }
      },
    };
  }

  /** Errors to the owner's log; of an outage, the first only (every worker's poll meets it). */
  private reportError(err: Error): void {
    if (isConnectionLoss(err)) {
      if (this.unreachable) return;
      this.unreachable = true;
      this.o.onError(new Error(`the queue cannot reach PostgreSQL (${err.message}); retrying, and quiet until it answers`));
      return;
    }
    this.o.onError(err);
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
    this.closing = true;
    await this.starting?.catch(() => undefined);
    this.starting = null;
    const end = Date.now() + STOP_TIMEOUT_MS;
    await this.boss?.stop({ graceful: true, wait: true, timeout: STOP_TIMEOUT_MS });
    this.boss = null;
    const pool = this.pool;
    if (!pool) return;
    this.pool = null;
    // The workers that were waiting for a connection get it, see they are stopped and leave (one
    // may have fetched a task: its run ends first). Checked from a timer, so that every step a
    // finished query or run leads to has been taken: quiet then is quiet for good.
    const quiet = () => this.running === 0 && pool.waitingCount === 0 && pool.idleCount === pool.totalCount;
    do await new Promise((resolve) => setTimeout(resolve, 20));
    while (!quiet() && Date.now() < end);
    await pool.end();
  }
}
