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
import type { CreditLedger } from '../../ledger/credit-ledger.ts';
import { addMicro, subMicro, timesMicro, toCredits, ZERO_MICRO } from '../../ledger/money.ts';
import type { Caller } from '../http/auth.ts';
import { creditHeaders, holdOr402 } from '../billing/holds.ts';
import { PRICES } from '../billing/prices.ts';
import type { EmergentStore } from '../search/emergent-store.ts';
import { AnswerCache } from '../search/answer-cache.ts';
import { HttpError } from '../http/http-error.ts';
import { idempotencyKeyHeader, requestHash } from '../http/idempotency-key.ts';
import { INSIGHTS_DEPTH_DEFAULT } from '../jobs/job-request.ts';
import type { JobRunner } from '../jobs/job-runner.ts';
import { SEARCH_LIMIT_MAX, parseSearchBody, type SearchBody } from '../search/search-body.ts';
import type { SnapshotStore } from '../generation/snapshot-store.ts';
import type { BuiltAnswer } from '../search/answer-build.ts';
import type { ServedGeneration } from '../search/served-generation.ts';

export interface SearchDeps {
  ledger: CreditLedger;
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

/** An answer stored with its settlement for Idempotency-Key replays: its JSON as sent (`body`: records of earlier versions). */
interface StoredResponse {
  status: number;
  json?: string;
  body?: unknown;
  headers: Record<string, string>;
}

/** Same account, same key, same request: the body as validated (so spacing or key order do not matter). */
function bodyHash(b: SearchBody): string {
  return requestHash([b.query, b.limit, b.window]);
}

export function searchHandler(deps: SearchDeps): Koa.Middleware {
  return async (ctx) => {
    const started = performance.now();
    const caller = ctx.state.caller as Caller;
    const body = parseSearchBody(ctx.request.body);
    const idemKey = idempotencyKeyHeader(ctx);
    if (idemKey) {
      const check = await deps.ledger.idempotencyBegin(caller.account, idemKey, bodyHash(body));
      if (check.kind === 'replay') {
        const r = check.response as StoredResponse;
        ctx.status = r.status;
        ctx.set(r.headers);
        ctx.set('Idempotent-Replayed', 'true');
        if (r.json !== undefined) ((ctx.type = 'application/json'), (ctx.body = r.json));
        else ctx.body = r.body;
        return;
      }
      if (check.kind === 'conflict') throw new HttpError(422, { error: 'this Idempotency-Key was used with a different request body' });
      if (check.kind === 'in_flight') throw new HttpError(409, { error: 'a request with this Idempotency-Key is still in progress' });
    }
    let hold: Awaited<ReturnType<typeof holdOr402>> | null = null;
    const lease = deps.snapshots.lease();
    try {
      hold = await holdOr402(deps.ledger, {
        account: caller.account,
        key: caller.key.id,
        amountMicro: timesMicro(PRICES.record, body.limit),
        ref: ctx.state.requestId as string,
        what: 'search',
        window: body.window,
        tier: '1',
        topUpUrl: deps.topUpUrl(),
        maxLimit: (available) => Math.min(SEARCH_LIMIT_MAX, Math.floor(available / PRICES.record)),
      });
      const gen = lease.gen;
      // The request as the ranking reads it: its analysed terms (so "EV recall" and "the ev recall" are one).
      const normalised = analyzeTerms(body.query);
      const cacheKey = AnswerCache.key(normalised, body.limit, body.window);
      let built: BuiltAnswer | undefined = deps.cache?.get(gen.id, cacheKey);
      const computed = !built;
      if (!built) {
        const answering = (async () => {
          await failpoint('search.rank');
          return gen.answer({ params: body, normalisedQuery: normalised.join(' '), patterns: deps.patterns });
        })();
        const outcome = deps.jobs ? await valueWithin(answering, deps.budgetMs - (performance.now() - started)) : await answering;
        if (outcome === null) {
          // Over budget (docs/api.md, "POST /search"). The hold is released in full and an insights job of the
          // window's default depth takes the query; the answer still being built is abandoned.
          answering.catch(() => undefined);
          const released = hold;
          hold = null;
          await deps.ledger.release(released.id, 'handed_to_job');
          const out = await deps.jobs!.submit(
            { account: caller.account, keyId: caller.key.id },
            { kind: 'insights', query: body.query, limit: INSIGHTS_DEPTH_DEFAULT[body.window], window: body.window, includeSignals: false },
            ctx.state.requestId as string,
            null,
          );
          if (idemKey) await deps.ledger.idempotencyAbort(caller.account, idemKey);
          const view = deps.jobs!.view(out.job);
          ctx.status = 202;
          ctx.set(
            creditHeaders(
              out.status === 200 ? (out.job.chargedMicro ?? ZERO_MICRO) : out.job.heldMicro,
              (await deps.ledger.balance(caller.account)).availableMicro,
            ),
          );
          ctx.body = {
            jobId: out.job.jobId,
            reason: 'sync_budget_exceeded',
            request_id: ctx.state.requestId as string,
            status: out.job.status,
            statusUrl: view.statusUrl,
            ...(out.status === 200 ? { charged: view.charged } : { estimated_cost: view.estimated_cost }),
          };
          return;
        }
        built = outcome;
      }
      deps.emergent.put(gen.id, built.emergent);
      const chargedMicro = timesMicro(PRICES.record, built.count);
      // The call's own fields, after the answer's parts (the order of docs/api.md's table).
      const own = JSON.stringify({
        query: body.query,
        window: body.window,
        request_id: ctx.state.requestId as string,
        response_time_ms: Math.round((performance.now() - started) * 100) / 100,
        usage: { credits: toCredits(chargedMicro) },
      });
      const json = Buffer.concat([
        OPEN,
        Buffer.from(built.json.buffer, built.json.byteOffset, built.json.byteLength),
        COMMA,
        Buffer.from(own.slice(1)),
      ]);
      // The answer is stored with its settlement (one durable record), so a replay returns it.
      // A replay's headers: the balance just before the settlement, as it will be after it.
      const replayHeaders = async () =>
        creditHeaders(
          chargedMicro,
          subMicro(addMicro((await deps.ledger.balance(caller.account)).availableMicro, hold!.amountMicro), chargedMicro),
        );
      const settled = await deps.ledger.settle(
        hold.id,
        chargedMicro,
        idemKey
          ? {
              key: idemKey,
              bodyHash: bodyHash(body),
              response: { status: 200, json: json.toString('utf8'), headers: await replayHeaders() } satisfies StoredResponse,
            }
          : undefined,
      );
      hold = null;
      ctx.set(creditHeaders(settled.chargedMicro, settled.availableMicro));
      if (computed && deps.cache && gen === deps.snapshots.generation) deps.cache.set(gen.id, cacheKey, built);
      ctx.type = 'application/json';
      ctx.body = json;
    } catch (err) {
      if (hold) await deps.ledger.release(hold.id, err instanceof HttpError ? `error ${err.status}` : 'error').catch(() => undefined);
      if (idemKey) await deps.ledger.idempotencyAbort(caller.account, idemKey).catch(() => undefined);
      throw err;
    } finally {
      lease.release();
    }
  };
}

const OPEN = Buffer.from('{');
const COMMA = Buffer.from(',');
