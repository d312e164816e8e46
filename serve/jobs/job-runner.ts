// Asynchronous jobs (docs/jobs.md): submit holds the most the job can cost and queues it, or
// answers from the cache (job-cache.ts); JOB_CONCURRENCY jobs run at once (../queue/: in memory or pg-boss), their
// retrieval in niced worker threads (retrieval-worker.ts) and their results built a slice at a
// time on the main thread (analyses.ts); a job settles to what it delivered or releases its whole
// hold. Records, results and the cache are kept by a JobStore (job-store.ts): files of this
// process, or PostgreSQL shared by every replica.
//
// Crash safety: a job's record is rewritten at every step and its result is kept before it is
// charged; the charge is a ledger settlement under the idempotency key "job:<jobId>", claimed
// before it is made. After a restart (or, with PostgreSQL, once a dead replica's run expires and
// another replica takes the job) a job whose hold is gone holds again and runs; one whose result
// was written but whose settlement is not in the ledger holds and settles again; one whose
// settlement is in the ledger is finished with that charge. A job is never charged twice.
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { failpoint } from '../../core/infra/failpoints.ts';
import type { Logger } from '../../core/infra/log.ts';
import { search, type RankedRow, type SearchParams } from '../../core/ranking/search.ts';
import { TaskPool } from '../../core/infra/workers/task-pool.ts';
import type { LedgerStore } from '../../ledger/ledger-store.ts';
import { asMicro, toCredits, ZERO_MICRO, type Micro } from '../../ledger/money.ts';
import { BilledCall, isHoldGone, keyRefusal } from '../billing/billed-call.ts';
import { creditHeaders } from '../billing/holds.ts';
import { isConnectionLoss } from '../../core/infra/postgres/connection-loss.ts';
import type { LoadedGeneration } from '../generation/loaded-generation.ts';
import { HttpError } from '../http/http-error.ts';
import type { SnapshotStore } from '../generation/snapshot-store.ts';
import { insightsResult, patternsResult, recordsResult, statsResult } from './analyses.ts';
import { cacheKey, type CacheEntry } from './job-cache.ts';
import type { TaskQueue } from '../queue/task-queue.ts';
import { chargeFor, holdAmount, maxLimitFor, SIGNALS_FLOOR, tierOf, type JobRequest } from './job-request.ts';
import { cacheEntryOf, type JobRecord, type JobStore } from './job-store.ts';
import type { RetrievalTask } from './retrieval-worker.ts';
import type { Summariser } from './summariser.ts';

/** Seconds a submit refused by a full queue is told to wait (Retry-After). */
const QUEUE_FULL_RETRY_S = 5;

/** A job that was running at this many crashes fails (refunded) instead of running again. */
export const MAX_ATTEMPTS = 3;

interface JobRunnerDeps {
  ledger: LedgerStore;
  snapshots: SnapshotStore;
  /** Where jobs are kept, and which runs next (job-store.ts, ../queue/task-queue.ts). */
  store: JobStore;
  queue: TaskQueue;
  log: Logger;
  threads: number;
  summariser: Summariser;
  topUpUrl: () => string;
  /** The path a job is polled at (statusUrl). */
  statusPath: (jobId: string) => string;
  /** Finished jobs (and their results) are deleted this long after they finished. */
  retentionMs: number;
  /** Told of every run: the job's kind, how it ended (its status, or "error" when the run threw), seconds (/metrics). */
  observeRun?: (kind: string, outcome: string, seconds: number) => void;
}

export interface Caller {
  account: string;
  keyId: string;
}
type SubmitOutcome = { status: 202; job: JobRecord } | { status: 200; job: JobRecord; result: Buffer };

/** The ledger's Idempotency-Key of a job's charge: a job is charged once, whichever run settles it. */
const chargeKey = (job: JobRecord) => `job:${job.jobId}`;
/** The response stored with that charge: `charged` (micro-credits) is its stored name, kept so charges already in a ledger read back. */
const chargeResponse = (chargedMicro: Micro) => ({ charged: chargedMicro });
const chargedOf = (response: unknown): Micro => asMicro((response as { charged: number }).charged);

export class JobRunner {
  readonly store: JobStore;
  private pool: TaskPool<RetrievalTask, RankedRow[]> | null = null;
  private pruneTimer: NodeJS.Timeout | null = null;

  constructor(private readonly d: JobRunnerDeps) {
    this.store = d.store;
  }

  /** Open the store, queue again what did not finish, start taking jobs. */
  async start(): Promise<void> {
    const again = await this.store.open();
    await this.prune();
    this.pruneTimer = setInterval(
      () => void this.prune().catch((err: Error) => this.d.log.error({ err: err.message }, 'pruning old jobs failed')),
      3_600_000,
    );
    this.pruneTimer.unref();
    await this.d.queue.start((jobId) => this.runById(jobId));
    for (const job of again) await this.d.queue.enqueue(job.jobId);
  }

  /** Finished jobs older than the retention go, with the results no kept job reads (a cache hit reads its source's). */
  prune(now = Date.now()): Promise<number> {
    return this.store.prune(now, this.d.retentionMs);
  }

  /** The billing headers of a submit: the charge of a cache hit (200), or the hold placed, the estimate (202). */
  async creditHeaders(out: SubmitOutcome): Promise<Record<string, string>> {
    const available = (await this.d.ledger.balance(out.job.account)).availableMicro;
    return creditHeaders(out.status === 200 ? (out.job.chargedMicro ?? ZERO_MICRO) : out.job.heldMicro, available);
  }

  async get(account: string, jobId: string): Promise<JobRecord | null> {
    const j = await this.store.get(jobId);
    return j && j.account === account && !j.submitting ? j : null;
  }

  resultOf(job: JobRecord): Promise<Buffer> {
    return this.store.readResult(job.resultOf ?? job.jobId);
  }

  /** Submit: an idempotent replay, a cache hit (200, charged now), or a queued job (202, hold placed). */
  async submit(caller: Caller, r: JobRequest, requestId: string, idem: { key: string; bodyHash: string } | null): Promise<SubmitOutcome> {
    const lease = this.d.snapshots.lease();
    try {
      const gen = lease.gen;
      const now = new Date().toISOString();
      const job: JobRecord = {
        jobId: `job_${randomBytes(12).toString('base64url')}`,
        account: caller.account,
        keyId: caller.keyId,
        request: r,
        status: 'queued',
        generation: gen.id,
        createdAt: now,
        startedAt: null,
        finishedAt: null,
        heldMicro: ZERO_MICRO,
        holdId: null,
        chargedMicro: null,
        delivered: null,
        hasResult: false,
        resultOf: null,
        cached: false,
        error: null,
        attempts: 0,
        idempotency: idem,
        submitting: true,
      };
      // The store claims the Idempotency-Key (across replicas with PostgreSQL): one job per key.
      const seen = await this.store.add(job);
      if (seen) {
        if (seen.idempotency!.bodyHash !== idem!.bodyHash) throw keyRefusal('conflict');
        if (seen.submitting) throw keyRefusal('in_flight');
        return seen.status === 'succeeded' && seen.cached
          ? { status: 200, job: seen, result: await this.resultOf(seen) }
          : { status: 202, job: seen };
      }
      try {
        const hit = await this.store.cacheGet(cacheKey(r, gen.id), Date.now());
        // A hit whose result is gone (pruned under a retention shorter than the cache window) is a miss.
        const cached = hit ? await this.store.readResult(hit.jobId).catch(() => null) : null;
        if (hit && cached) return await this.fromCache(job, hit, requestId, cached);
        // A full queue (one process's, JOB_QUEUE_MAX) takes no more: refused before anything is held.
        if (!this.d.queue.hasRoom())
          throw new HttpError(
            503,
            { error: 'the job queue is full (JOB_QUEUE_MAX jobs waiting): nothing was held; try again later', queue: 'jobs' },
            { 'Retry-After': String(QUEUE_FULL_RETRY_S) },
          );
        const call = this.billing(job);
        await this.place(call, job, holdAmount(r), requestId);
        delete job.submitting;
        try {
          // Kept and queued at once (one transaction with PostgreSQL): never kept but not queued.
          await this.store.saveQueued(job, this.d.queue);
        } catch (err) {
          job.submitting = true;
          await call.release('error').catch(() => undefined);
          throw err;
        }
      } catch (err) {
        if (job.submitting) await this.store.remove(job.jobId).catch(() => undefined);
        throw err;
      }
      return { status: 202, job };
    } finally {
      lease.release();
    }
  }

  /** A job's billed call: charged under the job's own key, with the hold its record keeps (if any). */
  private billing(job: JobRecord): BilledCall {
    const hold = job.holdId ? { id: job.holdId, amountMicro: job.heldMicro } : null;
    return new BilledCall(this.d.ledger, job.account, { key: chargeKey(job), bodyHash: 'job' }, hold);
  }

  /** Hold `amountMicro` for the job (or throw the 402), and keep the hold in its record. */
  private async place(call: BilledCall, job: JobRecord, amountMicro: Micro, ref: string): Promise<void> {
    const r = job.request;
    const hold = await call.place({
      key: job.keyId,
      amountMicro,
      ref,
      what: `job ${r.kind}`,
      window: r.window,
      tier: tierOf(r.kind),
      topUpUrl: this.d.topUpUrl(),
      maxLimit: (available) => maxLimitFor(r, available),
    });
    job.holdId = hold.id;
    job.heldMicro = hold.amountMicro;
  }

  /** The cache (docs/jobs.md, "Cache"): the cached result, at full price, or free for the account that paid for a flat-fee kind. */
  private async fromCache(job: JobRecord, hit: CacheEntry, requestId: string, result: Buffer): Promise<SubmitOutcome> {
    const flat = hit.kind === 'patterns' || hit.kind === 'stats';
    const priceMicro = flat && hit.payer === job.account ? ZERO_MICRO : hit.chargedMicro;
    let chargedMicro = ZERO_MICRO;
    if (priceMicro > 0) {
      const call = this.billing(job);
      await this.place(call, job, priceMicro, requestId);
      chargedMicro = (await call.settle(priceMicro, chargeResponse(priceMicro))).chargedMicro;
    }
    Object.assign(job, {
      status: 'succeeded',
      startedAt: job.createdAt,
      finishedAt: new Date().toISOString(),
      heldMicro: priceMicro,
      holdId: null,
      chargedMicro,
      delivered: hit.delivered,
      hasResult: true,
      resultOf: hit.jobId,
      cached: true,
    } satisfies Partial<JobRecord>);
    delete job.submitting;
    await this.store.cacheTouch(hit, Date.now());
    await this.store.save(job);
    return { status: 200, job, result };
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
      // A hold already released (its replica's lease ran out) is as good as released here.
      await this.billing(job)
        .release(`job failed (${status})`)
        .catch((err: unknown) => {
          if (!isHoldGone(err)) throw err;
        });
      job.holdId = null;
    }
    Object.assign(job, {
      status: 'failed',
      finishedAt: new Date().toISOString(),
      chargedMicro: ZERO_MICRO,
      error: { status, error },
    } satisfies Partial<JobRecord>);
    await this.store.save(job);
  }

  /** One delivery of a job from the queue: a job already finished (delivered twice) is left as it is. */
  private async runById(jobId: string): Promise<void> {
    const job = await this.store.get(jobId);
    if (!job || job.submitting || job.status === 'succeeded' || job.status === 'failed') return;
    const t0 = performance.now();
    let outcome = 'error';
    try {
      await this.run(job);
      outcome = job.status;
    } finally {
      this.d.observeRun?.(job.request.kind, outcome, (performance.now() - t0) / 1000);
    }
  }

  /** Jobs waiting and running (/metrics). */
  depth(): Promise<{ queued: number; running: number }> {
    return this.d.queue.depth();
  }

  private async run(job: JobRecord): Promise<void> {
    const r = job.request;
    // Run again after a crash with its result written: only the charge is left (settle() finds
    // out whether it was made before the crash: the ledger keeps the key 48 h).
    if (job.hasResult) return this.settle(job);
    if (job.attempts >= MAX_ATTEMPTS) return this.fail(job, 500, `the job was interrupted ${job.attempts} times; nothing was charged`);
    if (!job.holdId && !(await this.holdAgain(job, holdAmount(r)))) return;
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
      // The database out of reach fails no job: the queue delivers it again once it answers.
      if (isConnectionLoss(err)) throw err;
      this.d.log.error({ jobId: job.jobId, err: (err as Error).stack ?? String(err) }, 'job failed');
      return this.fail(job, 500, 'the job failed; its hold was released in full');
    } finally {
      lease.release();
    }
    return this.settle(job);
  }

  /** Hold `amount` for a job whose hold is gone (released at a restart, or by the lease of a dead replica); false when refused (the job failed). */
  private async holdAgain(job: JobRecord, amountMicro: Micro, call = this.billing(job)): Promise<boolean> {
    try {
      await this.place(call, job, amountMicro, job.jobId);
      return true;
    } catch (err) {
      if (!(err instanceof HttpError)) throw err;
      await this.fail(job, err.status, `the job could not hold its cost again after a restart: ${String(err.body.error)}`);
      return false;
    }
  }

  /**
   * Charge the job once, whichever run gets here: the charge is stored under the job's key, so a
   * run that finds it made (before a crash, or by another replica) only releases its own hold.
   */
  private async settle(job: JobRecord): Promise<void> {
    const amountMicro = chargeFor(job.request, job.delivered ?? 0);
    const call = this.billing(job);
    const check = await call.claim();
    if (check.kind === 'replay') {
      await call.release('job charged already').catch(() => undefined);
      return this.succeed(job, chargedOf(check.response));
    }
    // Another run is charging it right now: this delivery ends; the queue brings the job back.
    if (check.kind === 'in_flight') throw new Error(`job ${job.jobId} is being charged by another run`);
    let chargedMicro: Micro;
    try {
      if (!call.hold && !(await this.holdAgain(job, amountMicro, call))) return;
      try {
        chargedMicro = (await call.settle(amountMicro, chargeResponse(amountMicro))).chargedMicro;
      } catch (err) {
        if (!isHoldGone(err)) throw err;
        // Its hold was released under it (the lease of the replica that placed it ran out).
        job.holdId = call.hold = null;
        if (!(await this.holdAgain(job, amountMicro, call))) return;
        chargedMicro = (await call.settle(amountMicro, chargeResponse(amountMicro))).chargedMicro;
      }
    } catch (err) {
      await call.forget().catch(() => undefined);
      throw err;
    }
    job.holdId = null;
    await failpoint('job.after-settle');
    return this.succeed(job, chargedMicro);
  }

  private async succeed(job: JobRecord, chargedMicro: Micro): Promise<void> {
    // Cached before anyone can see it succeeded: a poll that sees it done and resubmits must hit the cache.
    job.chargedMicro = chargedMicro;
    Object.assign(job, { status: 'succeeded', finishedAt: new Date().toISOString(), holdId: null } satisfies Partial<JobRecord>);
    await this.store.cachePut(cacheEntryOf(job), Date.now());
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
    if (this.pruneTimer) clearInterval(this.pruneTimer);
    await this.d.queue.close();
    await this.pool?.close();
    await this.store.close();
  }
}

export const jobsDir = (dataDir: string) => path.join(dataDir, 'jobs');
