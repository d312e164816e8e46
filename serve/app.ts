// The Koa application under {base_url} = http://HOST:PORT + SERVICE_PREFIX: request ids, a JSON
// access log without secrets, JSON errors (never a stack trace), version selection, the key check
// and rate limit, a leased generation per request, and the routes. Built from its parts so tests
// and main.ts assemble the same app.
import { bodyParser } from '@koa/bodyparser';
import Router from '@koa/router';
import Koa from 'koa';
import { requireJsonBody } from '../core/infra/json-body.ts';
import { SEARCH_BUDGET_MS_DEFAULT } from '../core/infra/config.ts';
import type { Logger } from '../core/infra/log.ts';
import type { LedgerStore } from '../ledger/ledger-store.ts';
import { requireKey } from './http/auth.ts';
import { EmergentStore } from './search/emergent-store.ts';
import type { AnswerCache } from './search/answer-cache.ts';
import type { SearchPool } from './search/search-pool.ts';
import { HttpError } from './http/http-error.ts';
import type { RequestState } from './http/app-state.ts';
import type { ApiState } from './generation/api-state.ts';
import { accessLog } from './http/middleware/access-log.ts';
import { jsonErrors } from './http/middleware/errors.ts';
import { securityHeaders } from './http/middleware/headers.ts';
import { encodeJson } from './http/middleware/json-encode.ts';
import { requestId } from './http/middleware/request-id.ts';
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
import { probesRouter } from './account/probes.ts';
import type { SnapshotStore } from './generation/snapshot-store.ts';
import type { ServedGeneration } from './search/served-generation.ts';
import { alertsRouter, type AlertRouteDeps } from './alerts/alert-routes.ts';
import { deliveryRouter } from './alerts/delivery-routes.ts';

const API_VERSIONS = ['v1.0.1'] as const;
const DEFAULT_VERSION = 'v1.0.1';
const VERSION_HEADER = 'X-Service-Version';
const BODY_LIMIT = '32kb';

interface AppDeps {
  ledger: LedgerStore;
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
  /** SEARCH_BUDGET_MS (default SEARCH_BUDGET_MS_DEFAULT). */
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

export function createApp(deps: AppDeps): Koa<RequestState> {
  const app = new Koa<RequestState>();
  app.proxy = false;
  const emergent = deps.emergent ?? new EmergentStore();
  if (deps.requestMetrics) app.use(deps.requestMetrics);
  // Outermost first: the log line is written however the request ended; errors are shaped before
  // the JSON is encoded.
  if (deps.accessLog !== false) app.use(accessLog(deps.log));
  app.use(requestId);
  app.use(securityHeaders);
  app.use(encodeJson);
  app.use(jsonErrors(deps.log));
  const api = apiRouter(deps, emergent);
  app.use(api.routes());
  app.use(api.allowedMethods({ throw: false }));
  return app;
}

/** Past the key check: the rate limit, the API version asked for, and the generation leased for the request. */
function keyedRequest(deps: AppDeps): Koa.Middleware<ApiState> {
  const limiter = new RateLimiter(deps.rateLimit.perSecond, deps.rateLimit.burst);
  return async (ctx, next) => {
    limiter.take(ctx.state.caller.key.id);
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
  };
}

/** JSON bodies only, at most BODY_LIMIT; anything else is the API's 400. */
const jsonBodies = () =>
  bodyParser({
    enableTypes: ['json'],
    jsonLimit: BODY_LIMIT,
    onError: (err) => {
      const tooLarge = (err as { status?: number }).status === 413 || /too large/i.test(err.message);
      throw new HttpError(400, { error: tooLarge ? `request body too large (at most ${BODY_LIMIT})` : 'request body is not valid JSON' });
    },
  });

/** Every route under the prefix: the document and the dashboard without a key, the API behind it. */
function apiRouter(deps: AppDeps, emergent: EmergentStore): Router<ApiState> {
  const api = new Router<ApiState>({ prefix: deps.prefix });
  api.get('/openapi.json', (ctx) => {
    ctx.body = openApiDocument(deps.prefix);
  });
  // The dashboard's pages hold no data (they read the API with the key the person types in): no key.
  const ui = uiRouter(deps.prefix);
  api.use(ui.routes());
  // An orchestrator's liveness and readiness probes hold none either.
  api.use(probesRouter({ ledger: deps.ledger, snapshots: deps.snapshots }).routes());
  // Everything else: a key, the rate limit, the API version, a leased generation.
  api.use(requireKey(deps.ledger));
  api.use(keyedRequest(deps));
  api.use(jsonBodies());
  api.get('/billing/top-up', (ctx) => {
    ctx.body = {
      account: ctx.state.caller.account,
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
      budgetMs: deps.searchBudgetMs ?? SEARCH_BUDGET_MS_DEFAULT,
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
  return api;
}
