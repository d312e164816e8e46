// The job store on PostgreSQL (DATABASE_URL): every replica reads and writes the same job
// records, results and cache (migrations/001_jobs.sql), so any replica accepts a job, runs it and
// answers its status, and an Idempotency-Key is one job across replicas.
import path from 'node:path';
import { migrate } from '../../core/infra/postgres/migrate.ts';
import { createPool, inTransaction, type PgPool } from '../../core/infra/postgres/pool.ts';
import { expiryOf, ROLLING_MS, type CacheEntry } from './job-cache.ts';
import type { TaskQueue } from '../queue/task-queue.ts';
import { pruneSet, type JobRecord, type JobStore } from './job-store.ts';
import type { Micro } from '../../ledger/money.ts';

const JOBS_SCHEMA = 'jobs';
const MIGRATIONS = path.join(import.meta.dirname, 'migrations');
/** A submit that has held a key this long without finishing died with its replica: the key is free again. */
const SUBMIT_ABANDONED_MS = 60_000;

export class PgJobStore implements JobStore {
  private readonly pool: PgPool;

  constructor(databaseUrl: string) {
    this.pool = createPool(databaseUrl, { max: 4, applicationName: 'content-intelligence jobs' });
  }

  async open(): Promise<JobRecord[]> {
    await migrate(this.pool, JOBS_SCHEMA, MIGRATIONS);
    // Unfinished jobs stay in pg-boss's queue; nothing to queue again.
    return [];
  }

  async get(jobId: string): Promise<JobRecord | null> {
    const { rows } = await this.pool.query<{ record: JobRecord }>('SELECT record FROM jobs.jobs WHERE job_id = $1', [jobId]);
    return rows[0]?.record ?? null;
  }

  async add(job: JobRecord): Promise<JobRecord | null> {
    for (;;) {
      const added = await this.pool.query(
        `INSERT INTO jobs.jobs (job_id, account_id, idem_key, status, record) VALUES ($1, $2, $3, $4, $5)
         ON CONFLICT (account_id, idem_key) DO NOTHING`,
        [job.jobId, job.account, job.idempotency?.key ?? null, job.status, JSON.stringify(job)],
      );
      if (added.rowCount === 1) return null;
      const { rows } = await this.pool.query<{ record: JobRecord; abandoned: boolean }>(
        `SELECT record, created_at < now() - make_interval(secs => $3 / 1000.0) AS abandoned
         FROM jobs.jobs WHERE account_id = $1 AND idem_key = $2`,
        [job.account, job.idempotency!.key, SUBMIT_ABANDONED_MS],
      );
      const seen = rows[0];
      if (!seen) continue; // removed between the two statements: add again
      if (!(seen.record.submitting && seen.abandoned)) return seen.record;
      await this.pool.query('DELETE FROM jobs.jobs WHERE job_id = $1 AND record::jsonb @> \'{"submitting": true}\'', [seen.record.jobId]);
    }
  }

  async save(job: JobRecord, client: { query: PgPool['query'] } = this.pool): Promise<void> {
    await client.query(
      `INSERT INTO jobs.jobs (job_id, account_id, idem_key, status, finished_at, record) VALUES ($1, $2, $3, $4, $5, $6)
       ON CONFLICT (job_id) DO UPDATE SET status = EXCLUDED.status, finished_at = EXCLUDED.finished_at, record = EXCLUDED.record`,
      [job.jobId, job.account, job.idempotency?.key ?? null, job.status, job.finishedAt, JSON.stringify(job)],
    );
  }

  /** The record and pg-boss's job in one transaction: both or neither. */
  async saveQueued(job: JobRecord, queue: TaskQueue): Promise<void> {
    if (!queue.enqueueIn) throw new Error('the PostgreSQL job store needs a queue kept in PostgreSQL');
    const enqueueIn = queue.enqueueIn.bind(queue);
    await inTransaction(this.pool, async (client) => {
      await this.save(job, client);
      await enqueueIn({ executeSql: (text, values) => client.query(text, values) }, job.jobId);
    });
  }

  async remove(jobId: string): Promise<void> {
    await this.pool.query('DELETE FROM jobs.jobs WHERE job_id = $1', [jobId]);
  }

  async saveResult(jobId: string, json: string): Promise<void> {
    await this.pool.query(
      'INSERT INTO jobs.results (job_id, json) VALUES ($1, $2) ON CONFLICT (job_id) DO UPDATE SET json = EXCLUDED.json',
      [jobId, json],
    );
  }

  async readResult(jobId: string): Promise<Buffer> {
    const { rows } = await this.pool.query<{ json: string }>('SELECT json FROM jobs.results WHERE job_id = $1', [jobId]);
    if (!rows[0]) throw new Error(`no result for job ${jobId}`);
    return Buffer.from(rows[0].json, 'utf8');
  }

  async prune(now: number, retentionMs: number): Promise<number> {
    const { rows } = await this.pool.query<{
      jobId: string;
      status: JobRecord['status'];
      finishedAt: string | null;
      resultOf: string | null;
    }>(`SELECT job_id AS "jobId", status, record ->> 'finishedAt' AS "finishedAt", record ->> 'resultOf' AS "resultOf" FROM jobs.jobs`);
    const { old, results } = pruneSet(rows as JobRecord[], now, retentionMs);
    if (old.length === 0) return 0;
    await this.pool.query('DELETE FROM jobs.jobs WHERE job_id = ANY ($1)', [old.map((j) => j.jobId)]);
    await this.pool.query('DELETE FROM jobs.results WHERE job_id = ANY ($1)', [results]);
    return old.length;
  }

  async cacheGet(key: string, now: number): Promise<CacheEntry | null> {
    const { rows } = await this.pool.query<{
      kind: CacheEntry['kind'];
      job_id: string;
      payer: string;
      charged_micro: Micro;
      delivered: number;
      expires_at: Date;
    }>('SELECT kind, job_id, payer, charged_micro, delivered, expires_at FROM jobs.cache WHERE key = $1 AND expires_at > $2', [
      key,
      new Date(now),
    ]);
    const r = rows[0];
    return r
      ? {
          key,
          kind: r.kind,
          jobId: r.job_id,
          payer: r.payer,
          chargedMicro: r.charged_micro,
          delivered: r.delivered,
          expiresAt: r.expires_at.getTime(),
        }
      : null;
  }

  async cachePut(e: Omit<CacheEntry, 'expiresAt'>, at: number): Promise<void> {
    const expiresAt = expiryOf(e.kind, at);
    if (expiresAt <= Date.now()) return;
    await this.pool.query(
      `INSERT INTO jobs.cache (key, kind, job_id, payer, charged_micro, delivered, expires_at) VALUES ($1, $2, $3, $4, $5, $6, $7)
       ON CONFLICT (key) DO UPDATE SET kind = EXCLUDED.kind, job_id = EXCLUDED.job_id, payer = EXCLUDED.payer,
         charged_micro = EXCLUDED.charged_micro, delivered = EXCLUDED.delivered, expires_at = EXCLUDED.expires_at`,
      [e.key, e.kind, e.jobId, e.payer, e.chargedMicro, e.delivered, new Date(expiresAt)],
    );
    // Entries past their time are of no use to anyone.
    await this.pool.query('DELETE FROM jobs.cache WHERE expires_at <= now()');
  }

  async cacheTouch(e: CacheEntry, now: number): Promise<void> {
    if (ROLLING_MS[e.kind] === undefined) return;
    e.expiresAt = expiryOf(e.kind, now);
    await this.pool.query('UPDATE jobs.cache SET expires_at = greatest(expires_at, $2) WHERE key = $1', [e.key, new Date(e.expiresAt)]);
  }

  async close(): Promise<void> {
    await this.pool.end();
  }
}
