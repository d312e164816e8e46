// POST /search (docs/api.md, "POST /search", "Billing and limits"): validate, hold limit x 0.01 credits, have the
// answer built on the request's generation (the one app.ts leased for it) by the search engine
// (serve/search/search-engine.ts: the worker pool, or this thread), settle to the rows returned
// (storing the answer under an Idempotency-Key), and release the hold if anything fails.
// The query is analysed once, here: the answer cache's key and the engine read its terms.
// This thread authenticates, bills and writes bytes: the answer comes back as a JSON fragment and
// only the call's own fields are written around it. A search whose answer has not come back within
// SEARCH_BUDGET_MS of the request's start releases its hold and is handed to an insights job (the
// 202 of docs/api.md, "POST /search"). A search the engine's queue has no room for is the 503 (its
// hold released). An identical request on the same generation reuses the answer from the answer
// cache (answer-cache.ts); it is still held, settled and recorded like any other.
import type Koa from 'koa';
import { analyseSearch, type AnalysedSearch } from '../../core/ranking/search.ts';
import { failpoint } from '../../core/infra/failpoints.ts';
import { valueWithin } from '../../core/infra/wait-at-most.ts';
import type { LedgerStore } from '../../ledger/ledger-store.ts';
import { timesMicro, toCredits } from '../../ledger/money.ts';
import type { ApiState } from '../generation/api-state.ts';
import type { LoadedGeneration } from '../generation/loaded-generation.ts';
import { HttpError } from '../http/http-error.ts';
import { billed, BilledCall, sendReplay, type StoredResponse } from '../billing/billed-call.ts';
import { PRICES } from '../billing/prices.ts';
import { AnswerCache } from '../search/answer-cache.ts';
import { idempotencyKeyHeader, requestHash } from '../http/idempotency-key.ts';
import { INSIGHTS_DEPTH_DEFAULT } from '../jobs/job-request.ts';
import type { JobRunner } from '../jobs/job-runner.ts';
import { SEARCH_LIMIT_MAX, parseSearchBody, type SearchBody } from '../search/search-body.ts';
import type { BuiltAnswer } from '../search/answer-build.ts';
import { SearchQueueFull } from '../search/search-engine.ts';
import type { SearchParts } from '../search/search-parts.ts';

interface SearchDeps {
  ledger: LedgerStore;
  /** The engine, the answer cache, the emergent narratives, and the route's settings (SEARCH_PATTERNS, SEARCH_BUDGET_MS). */
  search: SearchParts;
  /** Where a search over its budget is handed. */
  jobs: JobRunner;
  topUpUrl: () => string;
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
    const gen = ctx.state.gen;
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
      const answer = await answerWithin(deps, gen, analyseSearch(body), started);
      if (answer === null) return handToJob(ctx, deps, call, body);
      await settleAnswer(ctx, deps, call, { body, started, gen, ...answer });
    });
  };
}

interface Answer {
  built: BuiltAnswer;
  /** Built for this request (not from the cache): cached once it is charged. */
  computed: boolean;
  cacheKey: string;
}

/** The answer, from the cache or built by the engine; null when it is not back within the budget (a job takes it). */
async function answerWithin(deps: SearchDeps, gen: LoadedGeneration, search: AnalysedSearch, started: number): Promise<Answer | null> {
  const { engine, cache, patterns, budgetMs } = deps.search;
  // The request as the ranking reads it: its analysed terms (so "EV recall" and "the ev recall" are one).
  const cacheKey = AnswerCache.key(search.terms, search.limit, search.window);
  // The warm-up set of the next swap (answered there unbilled: serve/search/swap-warm-up.ts).
  deps.search.recent.record(search);
  const cached = cache.get(gen.id, cacheKey);
  if (cached) return { built: cached, computed: false, cacheKey };
  const answering = (async () => {
    await failpoint('search.rank');
    return engine.answer(gen, { params: search, patterns }).catch((err: unknown) => {
      if (err instanceof SearchQueueFull) throw new HttpError(503, { error: err.message }, { 'Retry-After': String(QUEUE_FULL_RETRY_S) });
      throw err;
    });
  })();
  const built = await valueWithin(answering, budgetMs - (performance.now() - started));
  if (built === null) {
    // The answer still being built is abandoned.
    answering.catch(() => undefined);
    return null;
  }
  return { built, computed: true, cacheKey };
}

/** A full search queue's Retry-After, in seconds: by then part of it has drained (the workers answer 130-186 searches a second at 1M posts on two cores). */
const QUEUE_FULL_RETRY_S = 1;

/**
 * Over budget (docs/api.md, "POST /search"): the hold is released in full and an insights job of
 * the window's default depth takes the query (the 202).
 */
async function handToJob(ctx: SearchContext, deps: SearchDeps, call: BilledCall, body: SearchBody): Promise<void> {
  const jobs = deps.jobs;
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
  a: Answer & { body: SearchBody; started: number; gen: LoadedGeneration },
): Promise<void> {
  const { built, body, gen } = a;
  deps.search.emergent.put(gen.id, built.emergent);
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
  // Kept only while `gen` is the generation served (the cache drops other generations' answers).
  if (a.computed) deps.search.cache.set(gen.id, a.cacheKey, built);
  ctx.type = 'application/json';
  ctx.body = json;
}

const OPEN = Buffer.from('{');
const COMMA = Buffer.from(',');
