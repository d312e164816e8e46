// The job store of one process: one JSON record per job under DATA_DIR/jobs/ (<jobId>.json),
// rewritten atomically at every change of state, and its result beside it (<jobId>.result.json),
// written before the job is charged; every record is also held in memory with the job cache. A
// restart reads them back (job-runner.ts decides what runs again).
import fs from 'node:fs/promises';
import path from 'node:path';
import { writeFileAtomic } from '../../core/infra/durable-fs.ts';
import { JobCache, type CacheEntry } from './job-cache.ts';
import { cacheEntryOf, pruneSet, type JobRecord, type JobStore } from './job-store.ts';
import type { TaskQueue } from '../queue/task-queue.ts';

const idemId = (account: string, key: string) => `${account}\u0000${key}`;

/** The files of DATA_DIR/jobs, every record also held in memory (the process is the only writer). */
export class FileJobStore implements JobStore {
  readonly files: JobFiles;
  private readonly jobs = new Map<string, JobRecord>();
  private readonly byIdempotencyKey = new Map<string, string>();
  private readonly cache = new JobCache();

  constructor(
    dir: string,
    private readonly onUnreadable: (file: string) => void,
  ) {
    this.files = new JobFiles(dir);
  }

  async open(): Promise<JobRecord[]> {
    const { jobs, unreadable } = await this.files.open();
    for (const f of unreadable) this.onUnreadable(f);
    const again: JobRecord[] = [];
    for (const job of jobs) {
      this.track(job);
      if (job.status === 'succeeded' && !job.cached && job.generation) this.cache.put(cacheEntryOf(job), Date.parse(job.finishedAt!));
      if (job.status === 'queued' || job.status === 'running') {
        // The ledger released this job's hold when it recovered; the run holds again.
        job.holdId = null;
        job.status = 'queued';
        await this.files.save(job);
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
    return this.files.save(job);
  }

  /** Saved first: a crash before it is queued leaves it queued on disk, and a restart queues it (open()). */
  async saveQueued(job: JobRecord, queue: TaskQueue): Promise<void> {
    await this.save(job);
    await queue.enqueue(job.jobId);
  }

  async remove(jobId: string): Promise<void> {
    const j = this.jobs.get(jobId);
    this.jobs.delete(jobId);
    if (j?.idempotency) this.byIdempotencyKey.delete(idemId(j.account, j.idempotency.key));
    await this.files.removeRecord(jobId);
  }

  saveResult(jobId: string, json: string): Promise<void> {
    return this.files.saveResult(jobId, json);
  }

  readResult(jobId: string): Promise<Buffer> {
    return this.files.readResult(jobId);
  }

  async prune(now: number, retentionMs: number): Promise<number> {
    const { old, results } = pruneSet([...this.jobs.values()], now, retentionMs);
    for (const j of old) await this.remove(j.jobId);
    for (const id of results) await this.files.removeResult(id);
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

/** The files themselves. */
class JobFiles {
  constructor(readonly dir: string) {}

  /** Every job record, oldest first; files that do not parse (damaged outside the service: records are written atomically) are named, not read. */
  async open(): Promise<{ jobs: JobRecord[]; unreadable: string[] }> {
    await fs.mkdir(this.dir, { recursive: true });
    const jobs: JobRecord[] = [];
    const unreadable: string[] = [];
    for (const f of await fs.readdir(this.dir)) {
      if (!/^job_[A-Za-z0-9_-]+\.json$/.test(f)) continue;
      try {
        jobs.push(JSON.parse(await fs.readFile(path.join(this.dir, f), 'utf8')) as JobRecord);
      } catch {
        unreadable.push(f);
      }
    }
    return { jobs: jobs.sort((a, b) => (a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : 0)), unreadable };
  }

  save(job: JobRecord): Promise<void> {
    return writeFileAtomic(path.join(this.dir, `${job.jobId}.json`), JSON.stringify(job));
  }

  resultFile(jobId: string): string {
    return path.join(this.dir, `${jobId}.result.json`);
  }

  saveResult(jobId: string, json: string): Promise<void> {
    return writeFileAtomic(this.resultFile(jobId), json);
  }

  async removeRecord(jobId: string): Promise<void> {
    await fs.rm(path.join(this.dir, `${jobId}.json`), { force: true });
  }

  async removeResult(jobId: string): Promise<void> {
    await fs.rm(this.resultFile(jobId), { force: true });
  }

  readResult(jobId: string): Promise<Buffer> {
    return fs.readFile(this.resultFile(jobId));
  }
}
