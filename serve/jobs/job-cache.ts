// The job cache (docs/jobs.md, "Cache"): identical job requests (the normalised request, on the same generation) answered from
// a cache. records and insights: 15 minutes and 1 hour, rolling (each hit keeps the entry another
// window), at full price. patterns and stats: until the next 00:00 UTC, free for the account that
// paid, full price for any other. Entries point at the job whose result file holds the answer, so
// the cache is rebuilt from the job records after a restart.
import { createHash } from 'node:crypto';
import { DAY_MS } from '../../core/snapshots/windows.ts';
import type { JobKind, JobRequest } from './job-request.ts';
import type { Micro } from '../../ledger/money.ts';

export const ROLLING_MS: Partial<Record<JobKind, number>> = { records: 15 * 60_000, insights: 60 * 60_000 };

/** The query as compared: Unicode-normalised (NFKC), lower case, runs of white space as one space. */
export const normaliseQuery = (q: string) => q.normalize('NFKC').toLowerCase().replace(/\s+/g, ' ').trim();

export function cacheKey(r: JobRequest, generation: string): string {
  return createHash('sha256')
    .update(JSON.stringify([r.kind, normaliseQuery(r.query), r.limit, r.window, r.includeSignals, generation]))
    .digest('hex');
}

export interface CacheEntry {
  key: string;
  kind: JobKind;
  /** The job whose result file holds the answer. */
  jobId: string;
  /** The account that paid for the computation. */
  payer: string;
  /** What the computation was charged (micro-credits): the full price of a re-read. */
  chargedMicro: Micro;
  delivered: number;
  expiresAt: number;
}

/** When an entry made (or last used, for the rolling kinds) at `at` expires. */
export function expiryOf(kind: JobKind, at: number): number {
  const rolling = ROLLING_MS[kind];
  return rolling !== undefined ? at + rolling : (Math.floor(at / DAY_MS) + 1) * DAY_MS;
}

export class JobCache {
  private readonly entries = new Map<string, CacheEntry>();

  constructor(private readonly now: () => number = Date.now) {}

  get(key: string, now = this.now()): CacheEntry | null {
    const e = this.entries.get(key);
    if (!e) return null;
    if (e.expiresAt <= now) {
      this.entries.delete(key);
      return null;
    }
    return e;
  }

  put(e: Omit<CacheEntry, 'expiresAt'>, at = this.now()): void {
    const expiresAt = expiryOf(e.kind, at);
    if (expiresAt > this.now()) this.entries.set(e.key, { ...e, expiresAt });
  }

  /** A hit: the rolling kinds' window starts again. */
  touch(e: CacheEntry, now = this.now()): void {
    if (ROLLING_MS[e.kind] !== undefined) e.expiresAt = expiryOf(e.kind, now);
  }

  get size(): number {
    return this.entries.size;
  }
}
