// The Koa application under {base_url} = http://HOST:PORT + SERVICE_PREFIX: request ids, a JSON
// access log without secrets, JSON errors (never a stack trace), version selection, the key check
// and rate limit, a leased generation per request, and the routes. Built from its parts so tests
// and main.ts assemble the same app.
import { randomBytes } from 'node:crypto';
import { Stream } from 'node:stream';
import { bodyParser } from '@koa/bodyparser';
import Router from '@koa/router';
import Koa from 'koa';
import { requireJsonBody } from '../core/infra/json-body.ts';
import type { Logger } from '../core/infra/log.ts';
import type { CreditLedger } from '../ledger/credit-ledger.ts';
import { requireKey } from './http/auth.ts';
import { EmergentStore } from './search/emergent-store.ts';
import type { AnswerCache } from './search/answer-cache.ts';
import type { SearchPool } from './search/search-pool.ts';
import { decodablePath, errorShape } from './http/error-shape.ts';
import { HttpError } from './http/http-error.ts';
import { closeIfBodyUnread } from './http/unread-body.ts';
import { openApiDocument } from './openapi/openapi.ts';
import { RateLimiter } from './http/rate-limit.ts';
import { accountRouter } from './account/account-routes.ts';
import type { JobRunner } from './jobs/job-runner.ts';
import { mcpHandler } from './mcp/mcp-route.ts';
import { jobsRouter } from './jobs/job-routes.ts';
import { narrativesRouter } from './maps/narrative-routes.ts';
import { relatedNarrativesRouter } from './maps/related-narratives.ts';
import { themesRouter } from './maps/theme-routes.ts';
import { patternsRouter } from './maps/pattern-routes.ts';
import { searchHandler } from './search-route/search-route.ts';
import { pricesRouter } from './billing/price-routes.ts';
import { mediaRouter } from './media/media-routes.ts';
import type { MediaEntries } from './media/media-entries.ts';
import { uiRouter } from './ui/ui-routes.ts';
import type { SnapshotStore } from './generation/snapshot-store.ts';
import type { ServedGeneration } from './search/served-generation.ts';
import { alertsRouter, type AlertRouteDeps } from './alerts/alert-routes.ts';
import { deliveryRouter } from './alerts/delivery-routes.ts';

export const API_VERSIONS = ['v1.0.1'] as const;
export const DEFAULT_VERSION = 'v1.0.1';
export const VERSION_HEADER = 'X-Service-Version';
export const BODY_LIMIT = '32kb';

export interface AppDeps {
  ledger: CreditLedger;
  snapshots: SnapshotStore<ServedGeneration>;
  log: Logger;
  prefix: string;
  /** Requests per second and burst per key. */
  rateLimit: { perSecond: number; burst: number };
  /** Where a 402 sends the caller (known once the server listens). */
  topUpUrl: () => string;
  emergent?: EmergentStore;
  startedAt?: Date;
  /** Pattern entries in search answers (SEARCH_PATTERNS; off by default). */
  searchPatterns?: boolean;
  /** Asynchronous jobs (the /intelligence/jobs routes, and the 202 hand-over of a search over budget). */
  jobs?: JobRunner;
  /** SEARCH_BUDGET_MS (default 2000). */
  searchBudgetMs?: number;
  /** This server's own {base_url} (known once it listens): the MCP tools call the API there. Without it, no /mcp. */
  selfUrl?: () => string;
  /** One JSON line per request at info level (default true); 5xx are logged as errors either way. */
  accessLog?: boolean;
  /** Answers of identical searches on the served generation (SEARCH_CACHE_MB); absent: none. */
  answerCache?: AnswerCache;
  /** The search workers (for /health; absent: searches run on the main thread). */
  searchPool?: SearchPool | null;
  /** DATA_DIR: the media routes read posts' media files under its landing/ folder. */
  dataDir: string;
  /** Posts' media lists, read from the snapshots (closed with the server). */
  media: MediaEntries;
  /** Requests by route and status for /metrics (serve/metrics/): the outermost middleware. */
  requestMetrics?: Koa.Middleware;
  /** Alert watches and their events (the /alerts routes); absent: none. */
  alerts?: AlertRouteDeps;
}

/** An http-errors 4xx (Koa's ctx.throw): its message was written for the client. */
function isClientError(err: unknown): err is { status: number; message: string } {
  const e = err as { status?: unknown; expose?: unknown };
  return typeof e?.status === 'number' && e.status >= 400 && e.status < 500 && e.expose === true;
}

const newRequestId = () => `req_${randomBytes(9).toString('base64url')}`;

export function createApp(deps: AppDeps): Koa {
  const app = new Koa();
  app.proxy = false;
  const limiter = new RateLimiter(deps.rateLimit.perSecond, deps.rateLimit.burst);
  const emergent = deps.emergent ?? new EmergentStore();
  if (deps.requestMetrics) app.use(deps.requestMetrics);

  // Request id, access log, errors as JSON.
  app.use(async (ctx, next) => {
    const t0 = performance.now();
    const requestId = newRequestId();
    ctx.state.requestId = requestId;
    ctx.set('X-Request-Id', requestId);
    // Every answer is what its Content-Type says (JSON, a thumbnail we encoded, a dashboard file).
    ctx.set('X-Content-Type-Options', 'nosniff');
    try {
      try {
        if (!decodablePath(ctx.path)) throw new HttpError(400, { error: 'the request path has a malformed percent-encoding' });
        await next();
        if (ctx.status === 404 && ctx.body === undefined) throw new HttpError(404, { error: `no route ${ctx.method} ${ctx.path}` });
      } catch (err) {
        if (err instanceof HttpError) {
          ctx.status = err.status;
          ctx.set(err.headers);
          ctx.body = { ...err.body, request_id: requestId };
        } else if (isClientError(err)) {
          // ctx.throw(4xx) from a part that does not know HttpError (a body parser, the admin router).
          ctx.status = err.status;
          ctx.body = { error: err.message, request_id: requestId };
        } else {
          ctx.status = 500;
          ctx.body = { error: 'internal error; quote the request_id when contacting support', request_id: requestId };
          deps.log.error({ requestId, err: (err as Error).stack ?? String(err) }, 'request failed');
        }
      }
      // Errors answered by parts that write text or nothing (405, 501 from the router) get the one shape.
      if (ctx.status >= 400 && ctx.respond !== false) {
        errorShape(ctx, requestId);
        closeIfBodyUnread(ctx);
      }
      // A JSON body encoded once, here: Koa's respond would stringify it, scan the text again for
      // Content-Length and encode it once more in the socket write (0.5 ms of a 100-row answer).
      const body = ctx.body;
      if (body !== null && typeof body === 'object' && !Buffer.isBuffer(body) && !(body instanceof Stream))
        ctx.body = Buffer.from(JSON.stringify(body));
    } finally {
      if (deps.accessLog !== false)
        deps.log.info(
          {
            requestId,
            method: ctx.method,
            path: ctx.path,
            status: ctx.status,
            ms: Math.round((performance.now() - t0) * 100) / 100,
            account: (ctx.state.caller as { account?: string } | undefined)?.account ?? null,
            credits: ctx.response.get('X-Service-Credits-Used') || null,
          },
          'access',
        );
    }
  });

  const api = new Router({ prefix: deps.prefix });
  api.get('/openapi.json', (ctx) => {
    ctx.body = openApiDocument(deps.prefix);
  });
  // The dashboard's pages hold no data (they read the API with the key the person types in): no key.
  const ui = uiRouter(deps.prefix);
  api.use(ui.routes());
  // Everything else: a key, the rate limit, the API version, a leased generation.
  api.use(requireKey(deps.ledger));
  api.use(async (ctx, next) => {
    limiter.take((ctx.state.caller as { key: { id: string } }).key.id);
    const asked = ctx.get(VERSION_HEADER) || (typeof ctx.query.version === 'string' ? ctx.query.version : '') || DEFAULT_VERSION;
    if (!(API_VERSIONS as readonly string[]).includes(asked))
      throw new HttpError(400, { error: `unknown API version ${asked} (versions: ${API_VERSIONS.join(', ')})` });
    ctx.set(VERSION_HEADER, asked);
    const lease = deps.snapshots.lease();
    ctx.state.gen = lease.gen;
    try {
      await next();
    } finally {
      lease.release();
    }
  });
  api.use(
    bodyParser({
      enableTypes: ['json'],
      jsonLimit: BODY_LIMIT,
      onError: (err, ctx) => {
        const tooLarge = (err as { status?: number }).status === 413 || /too large/i.test(err.message);
        void ctx;
        throw new HttpError(400, { error: tooLarge ? `request body too large (at most ${BODY_LIMIT})` : 'request body is not valid JSON' });
      },
    }),
  );
  api.get('/billing/top-up', (ctx) => {
    ctx.body = {
      account: (ctx.state.caller as { account: string }).account,
      how: 'credits are added by the operator of this service: npm run admin -- credits topup --account <account> --credits <n> (docs/ledger.md)',
    };
  });
  api.post(
    '/search',
    requireJsonBody,
    searchHandler({
      ledger: deps.ledger,
      snapshots: deps.snapshots,
      emergent,
      topUpUrl: deps.topUpUrl,
      patterns: deps.searchPatterns ?? false,
      budgetMs: deps.searchBudgetMs ?? 2000,
      jobs: deps.jobs,
      cache: deps.answerCache,
    }),
  );
  const routers = [
    narrativesRouter(emergent),
    relatedNarrativesRouter(emergent),
    themesRouter(),
    patternsRouter(),
    pricesRouter(),
    mediaRouter(deps.dataDir, deps.media),
    accountRouter(deps.ledger, deps.snapshots, deps.startedAt ?? new Date(), {
      pool: deps.searchPool ?? null,
      cache: deps.answerCache ?? null,
    }),
  ];
  if (deps.jobs) routers.push(jobsRouter(deps.jobs));
  if (deps.alerts) routers.push(alertsRouter(deps.alerts), deliveryRouter(deps.alerts));
  if (deps.selfUrl) api.all('/mcp', requireJsonBody, mcpHandler(deps.selfUrl));
  for (const r of routers) {
    api.use(r.routes(), r.allowedMethods());
  }
  app.use(api.routes());
  app.use(api.allowedMethods({ throw: false }));
  return app;
}
