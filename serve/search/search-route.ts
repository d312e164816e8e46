// POST /search (docs/api.md, "POST /search", "Billing and limits"): validate, hold limit x 0.01 credits, run the
// ranking core on the leased generation, build the answer, settle to the rows returned (storing
// the answer under an Idempotency-Key), and release the hold if anything fails. A search whose
// ranking has not come back within SEARCH_BUDGET_MS of the request's start releases its hold and
// is handed to an insights job (the 202 of docs/api.md, "POST /search").
import type Koa from 'koa';
import { failpoint } from '../../core/failpoints.ts';
import { valueWithin } from '../../core/wait-at-most.ts';
import type { Ledger } from '../../ledger/ledger.ts';
import { toCredits } from '../../ledger/money.ts';
import type { Caller } from '../http/auth.ts';
import { creditHeaders, holdOr402, PER_RECORD_MICRO } from '../billing/holds.ts';
import { contentItem, creatorsOf } from '../generation/content-item.ts';
import type { EmergentStore } from './emergent-store.ts';
import { HttpError } from '../http/http-error.ts';
import { idempotencyKeyHeader, requestHash } from '../http/idempotency-key.ts';
import { INSIGHTS_DEPTH_DEFAULT } from '../jobs/job-request.ts';
import type { JobRunner } from '../jobs/job-runner.ts';
import { SEARCH_LIMIT_MAX, parseSearchBody, type SearchBody } from './search-body.ts';
import { emergentNarratives, trackedNarratives } from './answer-narratives.ts';
import { searchPatterns } from './answer-patterns.ts';
import type { SnapshotStore } from '../generation/snapshot-store.ts';

export interface SearchDeps {
  ledger: Ledger;
  snapshots: SnapshotStore;
  emergent: EmergentStore;
  topUpUrl: () => string;
  /** Pattern entries in answers (SEARCH_PATTERNS). */
  patterns: boolean;
  /** SEARCH_BUDGET_MS, and the jobs a search over it is handed to (without jobs there is no budget). */
  budgetMs: number;
  jobs?: JobRunner;
}

interface StoredResponse {
  status: number;
  body: unknown;
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
      const check = deps.ledger.idempotencyBegin(caller.account, idemKey, bodyHash(body));
      if (check.kind === 'replay') {
        const r = check.response as StoredResponse;
        ctx.status = r.status;
        ctx.set(r.headers);
        ctx.set('Idempotent-Replayed', 'true');
        ctx.body = r.body;
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
        amountMicro: body.limit * PER_RECORD_MICRO,
        ref: ctx.state.requestId as string,
        what: 'search',
        window: body.window,
        tier: '1',
        topUpUrl: deps.topUpUrl(),
        maxLimit: (available) => Math.min(SEARCH_LIMIT_MAX, Math.floor(available / PER_RECORD_MICRO)),
      });
      const gen = lease.gen;
      const searching = (async () => {
        await failpoint('search.rank');
        return gen.search(body);
      })();
      const outcome = deps.jobs ? await valueWithin(searching, deps.budgetMs - (performance.now() - started)) : await searching;
      if (outcome === null) {
        // Over budget (docs/api.md, "POST /search"). The hold is released in full and an insights job of the
        // window's default depth takes the query; the search still running is abandoned.
        searching.catch(() => undefined);
        const released = hold;
        hold = null;
        await deps.ledger.release(released.id, 'handed_to_job');
        const out = await deps.jobs!.submit(
          { account: caller.account, keyId: caller.key.id },
          { kind: 'insights', query: body.query, limit: INSIGHTS_DEPTH_DEFAULT[body.window], window: body.window, includeSignals: false },
          ctx.state.requestId as string,
          null,
        );
        if (idemKey) deps.ledger.idempotencyAbort(caller.account, idemKey);
        const view = deps.jobs!.view(out.job);
        ctx.status = 202;
        ctx.set(
          creditHeaders(
            out.status === 200 ? (out.job.chargedMicro ?? 0) : out.job.heldMicro,
            deps.ledger.balance(caller.account).availableMicro,
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
      const { ranked, clusters } = outcome;
      const rows = ranked.map((r) => r.row);
      const content = ranked.map((r) => contentItem(gen, r));
      const emergent = emergentNarratives(gen, body.window, body.query, ranked, clusters);
      deps.emergent.put(gen.id, emergent);
      const narratives = [...trackedNarratives(gen, body.window, rows), ...emergent.map((e) => e.narrative)];
      const charged = content.length * PER_RECORD_MICRO;
      // Pattern entries are switched off unless SEARCH_PATTERNS is on; the list stays empty.
      const patterns = deps.patterns ? searchPatterns(gen, body.window, body.query, ranked) : [];
      const answer = {
        content,
        creators: creatorsOf(gen, rows),
        narratives,
        patterns,
        query: body.query,
        window: body.window,
        request_id: ctx.state.requestId as string,
        response_time_ms: Math.round((performance.now() - started) * 100) / 100,
        usage: { credits: toCredits(charged) },
      };
      // The answer is stored with its settlement (one durable record), so a replay returns it.
      const headers = creditHeaders(charged, deps.ledger.balance(caller.account).availableMicro + hold.amountMicro - charged);
      const settled = await deps.ledger.settle(
        hold.id,
        charged,
        idemKey
          ? { key: idemKey, bodyHash: bodyHash(body), response: { status: 200, body: answer, headers } satisfies StoredResponse }
          : undefined,
      );
      hold = null;
      ctx.set(creditHeaders(settled.chargedMicro, settled.availableMicro));
      ctx.body = answer;
    } catch (err) {
      if (hold) await deps.ledger.release(hold.id, err instanceof HttpError ? `error ${err.status}` : 'error').catch(() => undefined);
      if (idemKey) deps.ledger.idempotencyAbort(caller.account, idemKey);
      throw err;
    } finally {
      lease.release();
    }
  };
}
