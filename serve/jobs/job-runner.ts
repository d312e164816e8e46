// Asynchronous jobs (docs/jobs.md): submit holds the most the job can cost and queues it, or
// answers from the cache (job-cache.ts); JOB_CONCURRENCY jobs run at once, their retrieval in
// niced worker threads (retrieval-worker.ts) and their results built a slice at a time on the
// main thread (analyses.ts); a job settles to what it delivered or releases its whole hold.
//
// Crash safety: a job's record is rewritten at every step (job-store.ts) and its result is on
// disk before it is charged; the charge is a ledger settlement under the idempotency key
// "job:<jobId>". After a restart the ledger has released every open hold, so a queued job, or one
// that was running, holds again and runs; one whose result was written but whose settlement is
// not in the ledger holds and settles again; one whose settlement is in the ledger is finished
// with that charge. A job is never charged twice.
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { failpoint } from '../../core/failpoints.ts';
import type { Logger } from '../../core/log.ts';
import { search, type RankedRow, type SearchParams } from '../../core/ranking/search.ts';
import { TaskPool } from '../../core/workers/task-pool.ts';
import type { CreditLedger } from '../../ledger/credit-ledger.ts';
import { toCredits } from '../../ledger/money.ts';
import { holdOr402 } from '../billing/holds.ts';
import type { LoadedGeneration } from '../generation/loaded-generation.ts';
import { HttpError } from '../http/http-error.ts';
import type { SnapshotStore } from '../generation/snapshot-store.ts';
import { insightsResult, patternsResult, recordsResult, statsResult } from './analyses.ts';
import { cacheKey, JobCache, type CacheEntry } from './job-cache.ts';
import { chargeFor, holdAmount, maxLimitFor, SIGNALS_FLOOR, tierOf, type JobRequest } from './job-request.ts';
import { JobStore, type JobRecord } from './job-store.ts';
import type { RetrievalTask } from './retrieval-worker.ts';
import type { Summariser } from './summariser.ts';

/** A job that was running at this many crashes fails (refunded) instead of running again. */
export const MAX_ATTEMPTS = 3;

export interface JobRunnerDeps {
  ledger: CreditLedger;
  snapshots: SnapshotStore;
  dir: string;
  log: Logger;
  concurrency: number;
  threads: number;
  summariser: Summariser;
  topUpUrl: () => string;
  /** The path a job is polled at (statusUrl). */
  statusPath: (jobId: string) => string;
  /** Finished jobs (and their results) are deleted this long after they finished. */
  retentionMs: number;
}

export interface Caller {
  account: string;
  keyId: string;
}
export type SubmitOutcome = { status: 202; job: JobRecord } | { status: 200; job: JobRecord; result: Buffer };

const idempotencyKeyOf = (account: string, key: string) => `${account}\u0000${key}`;

export class JobRunner {
  readonly store: JobStore;
  readonly cache = new JobCache();
  private readonly jobs = new Map<string, JobRecord>();
  private readonly byIdempotencyKey = new Map<string, string>();
  /** Idempotency keys whose submit is still placing its hold (a duplicate meanwhile is a 409). */
  private readonly submitting = new Set<string>();
  private readonly queue: string[] = [];
  private running = 0;
  private pool: TaskPool<RetrievalTask, RankedRow[]> | null = null;
  private closed = false;
  private readonly active = new Set<Promise<void>>();
  private pruneTimer: NodeJS.Timeout | null = null;

  constructor(private readonly d: JobRunnerDeps) {
    this.store = new JobStore(d.dir);
  }

  /** Read the jobs on disk, rebuild the cache, and queue what did not finish. */
  async start(): Promise<void> {
    const { jobs, unreadable } = await this.store.open();
    for (const f of unreadable) this.d.log.error({ file: f }, 'job record unreadable; skipped');
    for (const job of jobs) {
      this.jobs.set(job.jobId, job);
      if (job.idempotency) this.byIdempotencyKey.set(idempotencyKeyOf(job.account, job.idempotency.key), job.jobId);
      if (job.status === 'succeeded' && !job.cached && job.generation) this.remember(job, Date.parse(job.finishedAt!));
      if (job.status === 'queued' || job.status === 'running') {
        // The ledger released this job's hold when it recovered; run() holds again.
        job.holdId = null;
        job.status = 'queued';
        await this.store.save(job);
        this.queue.push(job.jobId);
      }
    }
    await this.prune();
    this.pruneTimer = setInterval(
      () => void this.prune().catch((err: Error) => this.d.log.error({ err: err.message }, 'pruning old jobs failed')),
      3_600_000,
    );
    this.pruneTimer.unref();
    this.pump();
  }

  /** Finished jobs older than the retention go, with the results no kept job reads (a cache hit reads its source's). */
  async prune(now = Date.now()): Promise<number> {
    const isOld = (j: JobRecord) =>
      (j.status === 'succeeded' || j.status === 'failed') && j.finishedAt !== null && Date.parse(j.finishedAt) < now - this.d.retentionMs;
    const all = [...this.jobs.values()];
    const old = all.filter(isOld);
    const readBy = (j: JobRecord) => j.resultOf ?? j.jobId;
    const kept = new Set(all.filter((j) => !isOld(j)).map(readBy));
    const results = new Set(old.flatMap((j) => [j.jobId, readBy(j)]).filter((id) => !kept.has(id)));
    for (const j of old) {
      await this.store.removeRecord(j.jobId);
      this.jobs.delete(j.jobId);
      if (j.idempotency) this.byIdempotencyKey.delete(idempotencyKeyOf(j.account, j.idempotency.key));
    }
    for (const id of results) await this.store.removeResult(id);
    return old.length;
  }

  /** The account's available balance (micro-credits), for the billing headers. */
  async available(account: string): Promise<number> {
    return (await this.d.ledger.balance(account)).availableMicro;
  }

  get(account: string, jobId: string): JobRecord | null {
    const j = this.jobs.get(jobId);
    return j && j.account === account ? j : null;
  }

  resultOf(job: JobRecord): Promise<Buffer> {
    return this.store.readResult(job.resultOf ?? job.jobId);
  }

  /** Submit: an idempotent replay, a cache hit (200, charged now), or a queued job (202, hold placed). */
  async submit(caller: Caller, r: JobRequest, requestId: string, idem: { key: string; bodyHash: string } | null): Promise<SubmitOutcome> {
    const idemId = idem ? idempotencyKeyOf(caller.account, idem.key) : null;
    if (idem && idemId) {
      const seen = this.jobs.get(this.byIdempotencyKey.get(idemId) ?? '');
      if (seen) {
        if (seen.idempotency!.bodyHash !== idem.bodyHash)
          throw new HttpError(422, { error: 'this Idempotency-Key was used with a different request body' });
        return seen.status === 'succeeded' && seen.cached
          ? { status: 200, job: seen, result: await this.resultOf(seen) }
          : { status: 202, job: seen };
      }
      if (this.submitting.has(idemId)) throw new HttpError(409, { error: 'a request with this Idempotency-Key is still in progress' });
      this.submitting.add(idemId);
    }
    try {
      return await this.submitNew(caller, r, requestId, idem);
    } finally {
      if (idemId) this.submitting.delete(idemId);
    }
  }

  private async submitNew(
    caller: Caller,
    r: JobRequest,
    requestId: string,
    idem: { key: string; bodyHash: string } | null,
  ): Promise<SubmitOutcome> {
    const lease = this.d.snapshots.lease();
    try {
      const gen = lease.gen;
      const hit = this.cache.get(cacheKey(r, gen.id));
      const jobId = `job_${randomBytes(12).toString('base64url')}`;
      const now = new Date().toISOString();
      const job: JobRecord = {
        jobId,
        account: caller.account,
        keyId: caller.keyId,
        request: r,
        status: 'queued',
        generation: gen.id,
        createdAt: now,
        startedAt: null,
        finishedAt: null,
        heldMicro: 0,
        holdId: null,
        chargedMicro: null,
        delivered: null,
        hasResult: false,
        resultOf: null,
        cached: false,
        error: null,
        attempts: 0,
        idempotency: idem,
      };
      // A hit whose result file is gone (pruned under a retention shorter than the cache window) is a miss.
      const cached = hit ? await this.store.readResult(hit.jobId).catch(() => null) : null;
      if (hit && cached) return await this.fromCache(job, hit, requestId, cached);
      const hold = await this.hold(job, holdAmount(r), requestId);
      job.heldMicro = hold.amountMicro;
      job.holdId = hold.id;
      try {
        await this.store.save(job);
      } catch (err) {
        await this.d.ledger.release(hold.id, 'error').catch(() => undefined);
        throw err;
      }
      this.track(job);
      this.queue.push(jobId);
      this.pump();
      return { status: 202, job };
    } finally {
      lease.release();
    }
  }

  private track(job: JobRecord): void {
    this.jobs.set(job.jobId, job);
    if (job.idempotency) this.byIdempotencyKey.set(idempotencyKeyOf(job.account, job.idempotency.key), job.jobId);
  }

  private hold(job: JobRecord, amount: number, ref: string) {
    const r = job.request;
    return holdOr402(this.d.ledger, {
      account: job.account,
      key: job.keyId,
      amountMicro: amount,
      ref,
      what: `job ${r.kind}`,
      window: r.window,
      tier: tierOf(r.kind),
      topUpUrl: this.d.topUpUrl(),
      maxLimit: (available) => maxLimitFor(r, available),
    });
  }

  /** The cache (docs/jobs.md, "Cache"): the cached result, at full price, or free for the account that paid for a flat-fee kind. */
  private async fromCache(job: JobRecord, hit: CacheEntry, requestId: string, result: Buffer): Promise<SubmitOutcome> {
    const flat = hit.kind === 'patterns' || hit.kind === 'stats';
    const price = flat && hit.payer === job.account ? 0 : hit.chargedMicro;
    let charged = 0;
    if (price > 0) {
      const hold = await this.hold(job, price, requestId);
      charged = (await this.d.ledger.settle(hold.id, price, { key: `job:${job.jobId}`, bodyHash: 'job', response: { charged: price } }))
        .chargedMicro;
    }
    Object.assign(job, {
      status: 'succeeded',
      startedAt: job.createdAt,
      finishedAt: new Date().toISOString(),
      heldMicro: price,
      chargedMicro: charged,
      delivered: hit.delivered,
      hasResult: true,
      resultOf: hit.jobId,
      cached: true,
    } satisfies Partial<JobRecord>);
    this.cache.touch(hit);
    await this.store.save(job);
    this.track(job);
    return { status: 200, job, result };
  }

  private remember(job: JobRecord, at: number): void {
    this.cache.put(
      {
        key: cacheKey(job.request, job.generation!),
        kind: job.request.kind,
        jobId: job.jobId,
        payer: job.account,
        chargedMicro: job.chargedMicro ?? 0,
        delivered: job.delivered ?? 0,
      },
      at,
    );
  }

  private pump(): void {
    while (!this.closed && this.running < this.d.concurrency && this.queue.length > 0) {
      const job = this.jobs.get(this.queue.shift()!)!;
      this.running++;
      const p: Promise<void> = this.run(job)
        .catch((err: Error) => this.d.log.error({ jobId: job.jobId, err: err.message }, 'job bookkeeping failed'))
        .finally(() => {
          this.running--;
          this.active.delete(p);
          this.pump();
        });
      this.active.add(p);
    }
  }

  private retrievalPool(): TaskPool<RetrievalTask, RankedRow[]> {
    if (!this.pool || this.pool.broken)
      this.pool = new TaskPool<RetrievalTask, RankedRow[]>(new URL('./retrieval-worker.ts', import.meta.url), { threads: this.d.threads });
    return this.pool;
  }

  /** The query's rows: in a retrieval thread over the generation's shared parts, or here when it has none (SEARCH_THREADS=0). */
  private retrieve(gen: LoadedGeneration, params: SearchParams): Promise<RankedRow[]> {
    const shared = gen.index.shared;
    if (!shared) return Promise.resolve(search(gen.index, params, { exact: true }));
    return this.retrievalPool().run({ gen: gen.id, dir: gen.dir, shared, params });
  }

  private async fail(job: JobRecord, status: number, error: string): Promise<void> {
    if (job.holdId) {
      await this.d.ledger.release(job.holdId, `job failed (${status})`);
      job.holdId = null;
    }
    Object.assign(job, {
      status: 'failed',
      finishedAt: new Date().toISOString(),
      chargedMicro: 0,
      error: { status, error },
    } satisfies Partial<JobRecord>);
    await this.store.save(job);
  }

  private async run(job: JobRecord): Promise<void> {
    const r = job.request;
    // A job run again after a crash: was it charged before the crash? (The ledger keeps the key 48 h.)
    if (job.hasResult) {
      const check = await this.d.ledger.idempotencyBegin(job.account, `job:${job.jobId}`, 'job');
      if (check.kind === 'replay') return this.succeed(job, (check.response as { charged: number }).charged);
      if (check.kind === 'new') await this.d.ledger.idempotencyAbort(job.account, `job:${job.jobId}`);
    } else if (job.attempts >= MAX_ATTEMPTS) {
      return this.fail(job, 500, `the job was interrupted ${job.attempts} times; nothing was charged`);
    }
    if (!job.holdId) {
      try {
        const amount = job.hasResult ? chargeFor(r, job.delivered ?? 0) : holdAmount(r);
        const hold = await this.hold(job, amount, job.jobId);
        job.holdId = hold.id;
        job.heldMicro = hold.amountMicro;
      } catch (err) {
        if (err instanceof HttpError)
          return this.fail(job, err.status, `the job could not hold its cost again after a restart: ${String(err.body.error)}`);
        throw err;
      }
    }
    if (job.hasResult) return this.settle(job);
    job.status = 'running';
    job.startedAt = new Date().toISOString();
    job.attempts++;
    await this.store.save(job);
    await failpoint('job.running');
    const lease = this.d.snapshots.lease();
    try {
      const gen = lease.gen;
      job.generation = gen.id;
      const ranked = await this.retrieve(gen, { query: r.query, limit: r.limit, window: r.window });
      if (r.kind === 'insights' && r.includeSignals && ranked.length < SIGNALS_FLOOR[r.window]) {
        return await this.fail(
          job,
          422,
          `includeSignals needs at least ${SIGNALS_FLOOR[r.window]} records for window ${r.window}; the query matched ${ranked.length}. Nothing was charged.`,
        );
      }
      const json =
        r.kind === 'records'
          ? await recordsResult(gen, r, ranked)
          : r.kind === 'insights'
            ? await insightsResult(gen, r, ranked, this.d.summariser)
            : r.kind === 'patterns'
              ? patternsResult(gen, r, ranked)
              : statsResult(gen, r, ranked);
      await this.store.saveResult(job.jobId, json);
      job.hasResult = true;
      job.delivered = ranked.length;
      await this.store.save(job);
      await failpoint('job.after-result');
    } catch (err) {
      this.d.log.error({ jobId: job.jobId, err: (err as Error).stack ?? String(err) }, 'job failed');
      return this.fail(job, 500, 'the job failed; its hold was released in full');
    } finally {
      lease.release();
    }
    return this.settle(job);
  }

  private async settle(job: JobRecord): Promise<void> {
    const amount = chargeFor(job.request, job.delivered ?? 0);
    const s = await this.d.ledger.settle(job.holdId!, amount, { key: `job:${job.jobId}`, bodyHash: 'job', response: { charged: amount } });
    job.holdId = null;
    await failpoint('job.after-settle');
    return this.succeed(job, s.chargedMicro);
  }

  private async succeed(job: JobRecord, chargedMicro: number): Promise<void> {
    // Cached before anyone can see it succeeded: a poll that sees it done and resubmits must hit the cache.
    job.chargedMicro = chargedMicro;
    this.remember(job, Date.now());
    Object.assign(job, { status: 'succeeded', finishedAt: new Date().toISOString(), holdId: null } satisfies Partial<JobRecord>);
    await this.store.save(job);
  }

  /** What GET /intelligence/jobs/{id} shows (without the result). */
  view(job: JobRecord): Record<string, unknown> {
    return {
      jobId: job.jobId,
      kind: job.request.kind,
      status: job.status,
      statusUrl: this.d.statusPath(job.jobId),
      request: job.request,
      createdAt: job.createdAt,
      startedAt: job.startedAt,
      finishedAt: job.finishedAt,
      generation: job.generation,
      estimated_cost: toCredits(job.heldMicro),
      charged: job.chargedMicro === null ? null : toCredits(job.chargedMicro),
      records: job.delivered,
      cached: job.cached,
      error: job.error,
    };
  }

  /** No new jobs start; running ones finish (bounded by the caller); the retrieval threads stop. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.pruneTimer) clearInterval(this.pruneTimer);
    await Promise.all(this.active);
    await this.pool?.close();
  }
}

export const jobsDir = (dataDir: string) => path.join(dataDir, 'jobs');
