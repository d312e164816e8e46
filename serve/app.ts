// The Koa application under {base_url} = http://HOST:PORT + SERVICE_PREFIX: request ids, a JSON
// access log without secrets, JSON errors (never a stack trace), version selection, the key check
// and rate limit, one leased generation per request (every route reads it: POST /search's engine
// answers on it), and the routes. Built from the parts server.ts makes, each by its folder's own
// factory (search/search-parts.ts, jobs/job-parts.ts, alerts/alert-parts.ts, ...).
import { bodyParser } from '@koa/bodyparser';
import Router from '@koa/router';
import Koa from 'koa';
import { requireJsonBody } from './http/require-json-body.ts';
import type { Logger } from '../core/infra/log.ts';
import type { LedgerStore } from '../ledger/ledger-store.ts';
import { requireKey } from './http/auth.ts';
import { KeyVerdicts } from './http/key-verdicts.ts';
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
import { ReadCache } from './maps/read-cache.ts';
import { patternsRouter } from './maps/pattern-routes.ts';
import { searchHandler } from './search-route/search-route.ts';
import { pricesRouter } from './billing/price-routes.ts';
import { mediaRouter } from './media/media-routes.ts';
import type { MediaEntries } from './media/media-entries.ts';
import { uiRouter } from './ui/ui-routes.ts';
import { probesRouter } from './account/probes.ts';
import type { SnapshotStore } from './generation/snapshot-store.ts';
import type { SearchParts } from './search/search-parts.ts';
import type { ServiceMetrics } from './metrics/service-metrics.ts';
import type { AlertRouteDeps } from './alerts/alert-routes.ts';
import { alertsRouter } from './alerts/alert-routes.ts';
import { deliveryRouter } from './alerts/delivery-routes.ts';

const API_VERSIONS = ['v1.0.1'] as const;
const DEFAULT_VERSION = 'v1.0.1';
const VERSION_HEADER = 'X-Service-Version';
const BODY_LIMIT = '32kb';

/** The parts the routes answer from, each built by its folder's own factory (server.ts makes them). */
export interface AppParts {
  ledger: LedgerStore;
  snapshots: SnapshotStore;
  /** The search engine, the answer cache, the emergent narratives and POST /search's settings. */
  search: SearchParts;
  /** Asynchronous jobs (the /intelligence/jobs routes, and the 202 hand-over of a search over budget). */
  jobs: JobRunner;
  /** Posts' media lists, read from the snapshots (closed with the server). */
  media: MediaEntries;
  /** Alert watches and their events (the /alerts routes). */
  alerts: AlertRouteDeps;
  /** The free map reads' kept answers (serve/maps/read-cache.ts). */
  reads: ReadCache;
  /** Requests by route and status for /metrics (its `http` middleware is the outermost). */
  metrics: Pick<ServiceMetrics, 'http'>;
  /**
   * Known once the server listens: where a 402 sends the caller, and this server's own {base_url}
   * (the MCP tools call the API there).
   */
  urls: { topUp: string; self: string };
}

/** How the app is run. */
interface AppSettings {
  log: Logger;
  prefix: string;
  startedAt: Date;
  /** Requests per second and burst per key. */
  rateLimit: { perSecond: number; burst: number };
  /** How long a key's "valid" verdict carries free reads through a ledger outage (http/key-verdicts.ts). */
  keyVerdictMs: number;
  /** One JSON line per request at info level; 5xx are logged as errors either way. */
  accessLog: boolean;
  /** DATA_DIR: the media routes read posts' media files under its landing/ folder. */
  dataDir: string;
}

export function createApp(parts: AppParts, settings: AppSettings): Koa<RequestState> {
  const app = new Koa<RequestState>();
  app.proxy = false;
  app.use(parts.metrics.http);
  // Outermost first: the log line is written however the request ended; errors are shaped before
  // the JSON is encoded.
  if (settings.accessLog) app.use(accessLog(settings.log));
  app.use(requestId);
  app.use(securityHeaders);
  app.use(encodeJson);
  app.use(jsonErrors(settings.log));
  const api = apiRouter(parts, settings);
  app.use(api.routes());
  app.use(api.allowedMethods({ throw: false }));
  return app;
}

/** Past the key check: the rate limit, the API version asked for, and the generation leased for the request. */
function keyedRequest(snapshots: SnapshotStore, rateLimit: AppSettings['rateLimit']): Koa.Middleware<ApiState> {
  const limiter = new RateLimiter(rateLimit.perSecond, rateLimit.burst);
  return async (ctx, next) => {
    limiter.take(ctx.state.caller.key.id);
    const asked = ctx.get(VERSION_HEADER) || (typeof ctx.query.version === 'string' ? ctx.query.version : '') || DEFAULT_VERSION;
    if (!(API_VERSIONS as readonly string[]).includes(asked))
      throw new HttpError(400, { error: `unknown API version ${asked} (versions: ${API_VERSIONS.join(', ')})` });
    ctx.set(VERSION_HEADER, asked);
    // The request's one lease: every route reads this generation (POST /search's engine answers on it).
    const lease = snapshots.lease();
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
function apiRouter(parts: AppParts, settings: AppSettings): Router<ApiState> {
  const { ledger, snapshots, search, jobs, urls } = parts;
  const api = new Router<ApiState>({ prefix: settings.prefix });
  api.get('/openapi.json', (ctx) => {
    ctx.body = openApiDocument(settings.prefix);
  });
  // The dashboard's pages hold no data (they read the API with the key the person types in): no key.
  const ui = uiRouter(settings.prefix);
  api.use(ui.routes());
  // An orchestrator's liveness and readiness probes hold none either.
  api.use(probesRouter({ ledger, snapshots }).routes());
  // Everything else: a key, the rate limit, the API version, a leased generation.
  api.use(requireKey(ledger, new KeyVerdicts(settings.keyVerdictMs)));
  api.use(keyedRequest(snapshots, settings.rateLimit));
  api.use(jsonBodies());
  api.use(parts.reads.middleware(settings.prefix));
  api.get('/billing/top-up', (ctx) => {
    ctx.body = {
      account: ctx.state.caller.account,
      how: 'credits are added by the operator of this service: npm run admin -- credits topup --account <account> --credits <n> (docs/ledger.md)',
    };
  });
  api.post('/search', requireJsonBody, searchHandler({ ledger, search, jobs, topUpUrl: () => urls.topUp }));
  const routers = [
    narrativesRouter(search.emergent),
    relatedNarrativesRouter(search.emergent),
    themesRouter(),
    patternsRouter(),
    pricesRouter(),
    mediaRouter(settings.dataDir, parts.media),
    accountRouter(ledger, snapshots, settings.startedAt, {
      pool: search.pool,
      cache: search.cache,
      warmUp: search.warmUp,
      reads: parts.reads,
    }),
    jobsRouter(jobs),
    alertsRouter(parts.alerts),
    deliveryRouter(parts.alerts),
  ];
  api.all(
    '/mcp',
    requireJsonBody,
    mcpHandler(() => urls.self),
  );
  for (const r of routers) {
    api.use(r.routes(), r.allowedMethods());
  }
  return api;
}
