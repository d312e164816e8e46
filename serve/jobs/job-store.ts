// Where jobs are kept: their records, results and the job cache (docs/jobs.md). Two stores: the
// files of DATA_DIR/jobs with an index in memory (one process, the default; file-job-store.ts), and
// PostgreSQL (DATABASE_URL; pg-job-store.ts), which every replica reads and writes, so any replica
// accepts a job, runs it and answers for it; open-job-store.ts picks.
import { cacheKey, type CacheEntry } from './job-cache.ts';
import type { JobRequest } from './job-request.ts';
import type { TaskQueue } from '../queue/task-queue.ts';
import { ZERO_MICRO, type Micro } from '../../ledger/money.ts';

type JobStatus = 'queued' | 'running' | 'succeeded' | 'failed';

export interface JobRecord {
  jobId: string;
  account: string;
  keyId: string;
  request: JobRequest;
  status: JobStatus;
  /** The generation the job ran (or will run) on. */
  generation: string | null;
  createdAt: string;
  startedAt: string | null;
  finishedAt: string | null;
  /** The hold placed (micro-credits) and its ledger id while open. */
  heldMicro: Micro;
  holdId: string | null;
  /** What the job was charged (micro-credits), once settled. */
  chargedMicro: Micro | null;
  /** Records returned or analysed. */
  delivered: number | null;
  /** The result is in this job's result file (or, for a cache hit, in the one of `resultOf`). */
  hasResult: boolean;
  resultOf: string | null;
  /** Served from the cache (docs/jobs.md, "Cache"). */
  cached: boolean;
  /** Set when failed: the HTTP status the failure corresponds to and its message. */
  error: { status: number; error: string } | null;
  /** Runs started (a job running at a crash runs again, up to a bound). */
  attempts: number;
  /** Idempotency-Key of the submit, with the hash of its body. */
  idempotency: { key: string; bodyHash: string } | null;
  /** Set while the submit is still placing the hold: a duplicate meanwhile is a 409. */
  submitting?: boolean;
}

export interface JobStore {
  /** Open the store; returns the jobs a restart must queue again (queued or running at a stop). */
  open(): Promise<JobRecord[]>;
  get(jobId: string): Promise<JobRecord | null>;
  /**
   * Add a new job. With an Idempotency-Key the account already used, nothing is added and the
   * job that has the key comes back instead.
   */
  add(job: JobRecord): Promise<JobRecord | null>;
  save(job: JobRecord): Promise<void>;
  /** Save a job just accepted and queue it, so that a crash can never leave it kept but not queued. */
  saveQueued(job: JobRecord, queue: TaskQueue): Promise<void>;
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
