// Where jobs are kept: their records, results and the job cache (docs/jobs.md). Two books: the
// files of DATA_DIR/jobs with an index in memory (one process, the default; job-store.ts), and
// PostgreSQL (DATABASE_URL; pg-job-book.ts), which every replica reads and writes, so any replica
// accepts a job, runs it and answers for it.
import { cacheKey, JobCache, type CacheEntry } from './job-cache.ts';
import type { JobQueue } from './job-queue.ts';
import { JobStore, type JobRecord } from './job-store.ts';
import { ZERO_MICRO } from '../../ledger/money.ts';

export interface JobBook {
  /** Open the book; returns the jobs a restart must queue again (queued or running at a stop). */
  open(): Promise<JobRecord[]>;
  get(jobId: string): Promise<JobRecord | null>;
  /**
   * Add a new job. With an Idempotency-Key the account already used, nothing is added and the
   * job that has the key comes back instead.
   */
  add(job: JobRecord): Promise<JobRecord | null>;
  save(job: JobRecord): Promise<void>;
  /** Save a job just accepted and queue it, so that a crash can never leave it kept but not queued. */
  saveQueued(job: JobRecord, queue: JobQueue): Promise<void>;
  /** A job that never started (its hold refused): gone as if never submitted. */
  remove(jobId: string): Promise<void>;
  saveResult(jobId: string, json: string): Promise<void>;
  readResult(jobId: string): Promise<Buffer>;
  /** Finished jobs older than the retention go, with the results no kept job reads (a cache hit reads its source's). */
  prune(now: number, retentionMs: number): Promise<number>;
  cacheGet(key: string, now: number): Promise<CacheEntry | null>;
  cachePut(e: Omit<CacheEntry, 'expiresAt'>, at: number): Promise<void>;
  /** A hit: the rolling kinds' window starts again. */
  cacheTouch(e: CacheEntry, now: number): Promise<void>;
  close(): Promise<void>;
}

const idemId = (account: string, key: string) => `${account}\u0000${key}`;

/** The cache entry of a succeeded job, made at `at`. */
export function cacheEntryOf(job: JobRecord): Omit<CacheEntry, 'expiresAt'> {
  return {
    key: cacheKey(job.request, job.generation!),
    kind: job.request.kind,
    jobId: job.jobId,
    payer: job.account,
    chargedMicro: job.chargedMicro ?? ZERO_MICRO,
    delivered: job.delivered ?? 0,
  };
}

/** Which finished jobs are past the retention, and which result files only they read. */
export function pruneSet(all: JobRecord[], now: number, retentionMs: number): { old: JobRecord[]; results: string[] } {
  const isOld = (j: JobRecord) =>
    (j.status === 'succeeded' || j.status === 'failed') && j.finishedAt !== null && Date.parse(j.finishedAt) < now - retentionMs;
  const old = all.filter(isOld);
  const readBy = (j: JobRecord) => j.resultOf ?? j.jobId;
  const kept = new Set(all.filter((j) => !isOld(j)).map(readBy));
  return { old, results: [...new Set(old.flatMap((j) => [j.jobId, readBy(j)]).filter((id) => !kept.has(id)))] };
}

/** The files of DATA_DIR/jobs, every record also held in memory (the process is the only writer). */
export class FileJobBook implements JobBook {
  readonly store: JobStore;
  private readonly jobs = new Map<string, JobRecord>();
  private readonly byIdempotencyKey = new Map<string, string>();
  private readonly cache = new JobCache();

  constructor(
    dir: string,
    private readonly onUnreadable: (file: string) => void,
  ) {
    this.store = new JobStore(dir);
  }

  async open(): Promise<JobRecord[]> {
    const { jobs, unreadable } = await this.store.open();
    for (const f of unreadable) this.onUnreadable(f);
    const again: JobRecord[] = [];
    for (const job of jobs) {
      this.track(job);
      if (job.status === 'succeeded' && !job.cached && job.generation) this.cache.put(cacheEntryOf(job), Date.parse(job.finishedAt!));
      if (job.status === 'queued' || job.status === 'running') {
        // The ledger released this job's hold when it recovered; the run holds again.
        job.holdId = null;
        job.status = 'queued';
        await this.store.save(job);
        again.push(job);
      }
    }
    return again;
  }

  private track(job: JobRecord): void {
    this.jobs.set(job.jobId, job);
    if (job.idempotency) this.byIdempotencyKey.set(idemId(job.account, job.idempotency.key), job.jobId);
  }

  async get(jobId: string): Promise<JobRecord | null> {
    return this.jobs.get(jobId) ?? null;
  }

  async add(job: JobRecord): Promise<JobRecord | null> {
    const seen = job.idempotency ? this.jobs.get(this.byIdempotencyKey.get(idemId(job.account, job.idempotency.key)) ?? '') : undefined;
    if (seen) return seen;
    // Indexed before anything is awaited: a duplicate arriving meanwhile finds it.
    this.track(job);
    return null;
  }

  save(job: JobRecord): Promise<void> {
    this.track(job);
    return this.store.save(job);
  }

  /** Saved first: a crash before it is queued leaves it queued on disk, and a restart queues it (open()). */
  async saveQueued(job: JobRecord, queue: JobQueue): Promise<void> {
    await this.save(job);
    await queue.enqueue(job.jobId);
  }

  async remove(jobId: string): Promise<void> {
    const j = this.jobs.get(jobId);
    this.jobs.delete(jobId);
    if (j?.idempotency) this.byIdempotencyKey.delete(idemId(j.account, j.idempotency.key));
    await this.store.removeRecord(jobId);
  }

  saveResult(jobId: string, json: string): Promise<void> {
    return this.store.saveResult(jobId, json);
  }

  readResult(jobId: string): Promise<Buffer> {
    return this.store.readResult(jobId);
  }

  async prune(now: number, retentionMs: number): Promise<number> {
    const { old, results } = pruneSet([...this.jobs.values()], now, retentionMs);
    for (const j of old) await this.remove(j.jobId);
    for (const id of results) await this.store.removeResult(id);
    return old.length;
  }

  async cacheGet(key: string, now: number): Promise<CacheEntry | null> {
    return this.cache.get(key, now);
  }

  async cachePut(e: Omit<CacheEntry, 'expiresAt'>, at: number): Promise<void> {
    this.cache.put(e, at);
  }

  async cacheTouch(e: CacheEntry, now: number): Promise<void> {
    this.cache.touch(e, now);
  }

  async close(): Promise<void> {}
}
