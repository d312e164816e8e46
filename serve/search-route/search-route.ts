// POST /search (docs/api.md, "POST /search", "Billing and limits"): validate, hold limit x 0.01 credits, have the
// answer built on the leased generation (by an answer worker: search-pool.ts), settle to the rows
// returned (storing the answer under an Idempotency-Key), and release the hold if anything fails.
// This thread authenticates, bills and writes bytes: the answer comes back as a JSON fragment and
// only the call's own fields are written around it. A search whose answer has not come back within
// SEARCH_BUDGET_MS of the request's start releases its hold and is handed to an insights job (the
// 202 of docs/api.md, "POST /search"). An identical request on the same generation reuses the
// answer from the answer cache (answer-cache.ts); it is still held, settled and recorded like any other.
import type Koa from 'koa';
import { terms as analyzeTerms } from '../../core/text/analyzer.ts';
import { failpoint } from '../../core/infra/failpoints.ts';
import { valueWithin } from '../../core/infra/wait-at-most.ts';
import type { LedgerStore } from '../../ledger/ledger-store.ts';
import { timesMicro, toCredits } from '../../ledger/money.ts';
import type { ApiState } from '../generation/api-state.ts';
import { billed, BilledCall, sendReplay, type StoredResponse } from '../billing/billed-call.ts';
import { PRICES } from '../billing/prices.ts';
import type { EmergentStore } from '../search/emergent-store.ts';
import { AnswerCache } from '../search/answer-cache.ts';
import { idempotencyKeyHeader, requestHash } from '../http/idempotency-key.ts';
import { INSIGHTS_DEPTH_DEFAULT } from '../jobs/job-request.ts';
import type { JobRunner } from '../jobs/job-runner.ts';
import { SEARCH_LIMIT_MAX, parseSearchBody, type SearchBody } from '../search/search-body.ts';
import type { SnapshotStore } from '../generation/snapshot-store.ts';
import type { BuiltAnswer } from '../search/answer-build.ts';
import type { ServedGeneration } from '../search/served-generation.ts';

interface SearchDeps {
  ledger: LedgerStore;
  snapshots: SnapshotStore<ServedGeneration>;
  emergent: EmergentStore;
  topUpUrl: () => string;
  /** Pattern entries in answers (SEARCH_PATTERNS). */
  patterns: boolean;
  /** SEARCH_BUDGET_MS, and the jobs a search over it is handed to (without jobs there is no budget). */
  budgetMs: number;
  jobs?: JobRunner;
  /** Answers of identical requests on the served generation (SEARCH_CACHE_MB; absent or 0: none). */
  cache?: AnswerCache;
}

/** Same account, same key, same request: the body as validated (so spacing or key order do not matter). */
function bodyHash(b: SearchBody): string {
  return requestHash([b.query, b.limit, b.window]);
}

type SearchContext = Koa.ParameterizedContext<ApiState>;

export function searchHandler(deps: SearchDeps): Koa.Middleware<ApiState> {
  return async (ctx) => {
    const started = performance.now();
    const body = parseSearchBody(ctx.request.body);
    const idemKey = idempotencyKeyHeader(ctx);
    const call = new BilledCall(deps.ledger, ctx.state.caller.account, idemKey ? { key: idemKey, bodyHash: bodyHash(body) } : null);
    const stored = await call.claimOrRefuse();
    if (stored) return sendReplay(ctx, stored);
    const lease = deps.snapshots.lease();
    try {
      await billed(call, async () => {
        await call.place({
          key: ctx.state.caller.key.id,
          amountMicro: timesMicro(PRICES.record, body.limit),
          ref: ctx.state.requestId,
          what: 'search',
          window: body.window,
          tier: '1',
          topUpUrl: deps.topUpUrl(),
          maxLimit: (available) => Math.min(SEARCH_LIMIT_MAX, Math.floor(available / PRICES.record)),
        });
        const answer = await answerWithin(deps, lease.gen, body, started);
        if (answer === null) return handToJob(ctx, deps, call, body);
        await settleAnswer(ctx, deps, call, { body, started, gen: lease.gen, ...answer });
      });
    } finally {
      lease.release();
    }
  };
}

interface Answer {
  built: BuiltAnswer;
  /** Built for this request (not from the cache): cached once it is charged. */
  computed: boolean;
  cacheKey: string;
}

/** The answer, from the cache or built by an answer worker; null when it is not back within the budget (with jobs to hand it to). */
async function answerWithin(deps: SearchDeps, gen: ServedGeneration, body: SearchBody, started: number): Promise<Answer | null> {
  // The request as the ranking reads it: its analysed terms (so "EV recall" and "the ev recall" are one).
  const normalised = analyzeTerms(body.query);
  const cacheKey = AnswerCache.key(normalised, body.limit, body.window);
  const cached = deps.cache?.get(gen.id, cacheKey);
  if (cached) return { built: cached, computed: false, cacheKey };
  const answering = (async () => {
    await failpoint('search.rank');
    return gen.answer({ params: body, normalisedQuery: normalised.join(' '), patterns: deps.patterns });
  })();
  const built = deps.jobs ? await valueWithin(answering, deps.budgetMs - (performance.now() - started)) : await answering;
  if (built === null) {
    // The answer still being built is abandoned.
    answering.catch(() => undefined);
    return null;
  }
  return { built, computed: true, cacheKey };
}

/**
 * Over budget (docs/api.md, "POST /search"): the hold is released in full and an insights job of
 * the window's default depth takes the query (the 202).
 */
async function handToJob(ctx: SearchContext, deps: SearchDeps, call: BilledCall, body: SearchBody): Promise<void> {
  const jobs = deps.jobs!;
  await call.release('handed_to_job');
  const caller = ctx.state.caller;
  const out = await jobs.submit(
    { account: caller.account, keyId: caller.key.id },
    { kind: 'insights', query: body.query, limit: INSIGHTS_DEPTH_DEFAULT[body.window], window: body.window, includeSignals: false },
    ctx.state.requestId,
    null,
  );
  await call.forget();
  const view = jobs.view(out.job);
  ctx.status = 202;
  ctx.set(await jobs.creditHeaders(out));
  ctx.body = {
    jobId: out.job.jobId,
    reason: 'sync_budget_exceeded',
    request_id: ctx.state.requestId,
    status: out.job.status,
    statusUrl: view.statusUrl,
    ...(out.status === 200 ? { charged: view.charged } : { estimated_cost: view.estimated_cost }),
  };
}

/** Charge the rows returned and answer: the answer's JSON as built, then the call's own fields. */
async function settleAnswer(
  ctx: SearchContext,
  deps: SearchDeps,
  call: BilledCall,
  a: Answer & { body: SearchBody; started: number; gen: ServedGeneration },
): Promise<void> {
  const { built, body, gen } = a;
  deps.emergent.put(gen.id, built.emergent);
  const chargedMicro = timesMicro(PRICES.record, built.count);
  // The call's own fields, after the answer's parts (the order of docs/api.md's table).
  const own = JSON.stringify({
    query: body.query,
    window: body.window,
    request_id: ctx.state.requestId,
    response_time_ms: Math.round((performance.now() - a.started) * 100) / 100,
    usage: { credits: toCredits(chargedMicro) },
  });
  const json = Buffer.concat([
    OPEN,
    Buffer.from(built.json.buffer, built.json.byteOffset, built.json.byteLength),
    COMMA,
    Buffer.from(own.slice(1)),
  ]);
  // The answer is stored with its settlement (one durable record), so a replay returns it.
  const stored = call.idem
    ? ({ status: 200, json: json.toString('utf8'), headers: await call.replayHeaders(chargedMicro) } satisfies StoredResponse)
    : undefined;
  const settled = await call.settle(chargedMicro, stored);
  ctx.set(settled.headers);
  if (a.computed && deps.cache && gen === deps.snapshots.generation) deps.cache.set(gen.id, a.cacheKey, built);
  ctx.type = 'application/json';
  ctx.body = json;
}

const OPEN = Buffer.from('{');
const COMMA = Buffer.from(',');
