// Jobs on disk under DATA_DIR/jobs/: one JSON record per job (<jobId>.json), rewritten atomically
// at every change of state, and its result beside it (<jobId>.result.json), written before the
// job is charged. A restart reads them back (job-runner.ts decides what runs again).
import fs from 'node:fs/promises';
import path from 'node:path';
import { writeFileAtomic } from '../../core/infra/durable-fs.ts';
import type { JobRequest } from './job-request.ts';
import type { Micro } from '../../ledger/money.ts';

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

export class JobStore {
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
