// Starting and stopping the server: open the ledger (recovering it), make sure the demo account
// exists, load the current generation, listen on HOST:PORT, mount the ledger's admin endpoint for
// loopback callers, start the search workers, and check for new generations. SIGTERM: stop accepting, let in-flight
// requests finish, flush and close the ledger.
import http from 'node:http';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import type { Config } from '../core/infra/config.ts';
import { dataDirLayout } from '../core/infra/data-dir.ts';
import type { Logger } from '../core/infra/log.ts';
import { waitAtMost } from '../core/infra/wait-at-most.ts';
import { DAY_MS } from '../core/snapshots/windows.ts';
import { adminToken, announceAdminEndpoint, createAdminRouter } from '../ledger/admin/admin-api.ts';
import { dataDirPrefix } from '../ledger/backend-record.ts';
import type { LedgerStore } from '../ledger/ledger-store.ts';
import { openLedgerStore } from '../ledger/open-ledger-store.ts';
import { createApp } from './app.ts';
import { answerClientError, answerConnect, answerExpectation } from './http/client-error.ts';
import { ensureDemoAccount, type DemoKey } from './billing/demo-account.ts';
import { JobRunner } from './jobs/job-runner.ts';
import { openJobStore } from './jobs/open-job-store.ts';
import { summariserFrom } from './jobs/summariser.ts';
import { SearchPool } from './search/search-pool.ts';
import { servedLoader, type ServedGeneration } from './search/served-generation.ts';
import { osThreadId } from '../core/infra/workers/os-thread.ts';
import { AnswerCache } from './search/answer-cache.ts';
import { EmergentShare } from './search/emergent-share.ts';
import { EMERGENT_MAX, EMERGENT_TTL_MS, EmergentStore } from './search/emergent-store.ts';
import { SnapshotStore } from './generation/snapshot-store.ts';
import { MediaEntries } from './media/media-entries.ts';
import { ServiceMetrics } from './metrics/service-metrics.ts';
import { AlertEvaluator } from './alerts/alert-evaluator.ts';
import { openWebhookOutbox } from './alerts/webhook-outbox.ts';
import { openWatchStore } from './alerts/open-watch-store.ts';
import { configuredSigningKey } from './alerts/watch-secret.ts';
import type { AlertOutbox } from './alerts/alert-model.ts';
import type { WatchStore } from './alerts/watch-store.ts';

export interface RunningServer {
  url: string;
  baseUrl: string;
  ledger: LedgerStore;
  snapshots: SnapshotStore<ServedGeneration>;
  /** The search workers (null with SEARCH_THREADS=0). */
  searchPool: SearchPool | null;
  /** Answers of identical searches (SEARCH_CACHE_MB; disabled at 0). */
  answerCache: AnswerCache;
  jobs: JobRunner;
  /** Alert watches, their events' outbox, and the evaluation after each publish. */
  alerts: { watches: WatchStore; outbox: AlertOutbox; evaluator: AlertEvaluator };
  demo: DemoKey;
  demoCreated: boolean;
  demoFile: string;
  /** GET {base_url}/metrics; `metrics.deliveries` is the alerts' DeliveryObserver. */
  metrics: ServiceMetrics;
  /** Stop accepting, finish in-flight requests, close the ledger. */
  close(): Promise<void>;
}

/** How long close() waits for requests still being handled before it stops the workers and the ledger. */
const CLOSE_DRAIN_MS = 30_000;

/** What the server is made of, opened in this order and closed in the reverse. */
interface Parts {
  layout: ReturnType<typeof dataDirLayout>;
  metrics: ServiceMetrics;
  ledger: LedgerStore;
  pool: SearchPool | null;
  snapshots: SnapshotStore<ServedGeneration>;
  answerCache: AnswerCache;
  emergentShare: EmergentShare | null;
  emergent: EmergentStore;
  jobs: JobRunner;
  media: MediaEntries;
  watches: WatchStore;
  outbox: AlertOutbox;
  /** The key watch secrets derive from, loaded once for the routes and the deliveries. */
  signing: Buffer;
  evaluator: AlertEvaluator;
  /** Known once the server listens; read through closures by the parts that need them. */
  urls: { base: string; self: string; topUp: string };
}

/** The parts, built (nothing is started yet but the ledger, which recovers as it opens). */
async function makeParts(config: Config, log: Logger): Promise<Parts> {
  const layout = dataDirLayout(config.dataDir);
  const metrics = new ServiceMetrics(config.SERVICE_PREFIX);
  // Every caller gets the ledger through the credit counters (metrics/credit-metrics.ts).
  const ledger = metrics.credits.wrap(
    await openLedgerStore({ dir: layout.ledger, databaseUrl: config.DATABASE_URL, leaseMs: config.LEDGER_LEASE_MS }),
  );
  const pool =
    config.SEARCH_THREADS > 0
      ? new SearchPool(config.SEARCH_THREADS, (err) => log.error({ err: err.message }, 'search worker failed; a new one replaces it'))
      : null;
  const snapshots = new SnapshotStore(config.dataDir, log, servedLoader(pool));
  const answerCache = new AnswerCache(config.SEARCH_CACHE_MB * 1024 * 1024);
  // Replicas share the emergent narratives their searches form (DATABASE_URL).
  const emergentShare = config.DATABASE_URL
    ? new EmergentShare(config.DATABASE_URL, (err) => log.error({ err: err.message }, 'sharing emergent narratives failed'))
    : null;
  const emergent = new EmergentStore(EMERGENT_TTL_MS, EMERGENT_MAX, () => Date.now(), emergentShare);
  snapshots.onSwap((gen) => answerCache.swapTo(gen.id));
  const urls = { base: '', self: '', topUp: config.TOP_UP_URL ?? '' };
  const jobs = new JobRunner({
    ledger,
    snapshots,
    ...openJobStore(config, log),
    log,
    threads: config.JOB_THREADS,
    summariser: summariserFrom(config),
    topUpUrl: () => urls.topUp,
    statusPath: (id) => `${config.SERVICE_PREFIX}/intelligence/jobs/${id}`,
    retentionMs: config.JOB_RETENTION_DAYS * DAY_MS,
    observeRun: metrics.jobs.observeRun,
  });
  const media = new MediaEntries();
  const watches = openWatchStore(config, log);
  const signing = await configuredSigningKey(config);
  const outbox = openWebhookOutbox(config, log, watches, signing, metrics.deliveries);
  // Events link to narratives at PUBLIC_BASE_URL (the address clients use, behind a proxy), else where this server listens.
  const evaluator = new AlertEvaluator({
    watches,
    outbox,
    layout,
    baseUrl: () => config.PUBLIC_BASE_URL ?? urls.base,
    log,
    onEvaluated: metrics.alerts.evaluated,
  });
  return {
    layout,
    metrics,
    ledger,
    pool,
    snapshots,
    answerCache,
    emergentShare,
    emergent,
    jobs,
    media,
    watches,
    outbox,
    signing,
    evaluator,
    urls,
  };
}

/** The application with the ledger's admin endpoint and /metrics mounted beside it. */
async function appFor(p: Parts, config: Config, log: Logger, startedAt: Date) {
  // The default top-up address is the server's own /billing/top-up, which says how credits are added.
  const app = createApp({
    ledger: p.ledger,
    snapshots: p.snapshots,
    log,
    prefix: config.SERVICE_PREFIX,
    startedAt,
    rateLimit: { perSecond: config.RATE_LIMIT_RPS, burst: config.RATE_LIMIT_BURST },
    topUpUrl: () => p.urls.topUp,
    searchPatterns: config.SEARCH_PATTERNS,
    jobs: p.jobs,
    searchBudgetMs: config.SEARCH_BUDGET_MS,
    selfUrl: () => p.urls.self,
    accessLog: config.ACCESS_LOG === 'on' || (config.ACCESS_LOG === 'auto' && !process.stdout.isTTY),
    answerCache: p.answerCache,
    searchPool: p.pool,
    emergent: p.emergent,
    dataDir: config.dataDir,
    media: p.media,
    requestMetrics: p.metrics.http,
    alerts: {
      watches: p.watches,
      outbox: p.outbox,
      perAccount: config.ALERTS_PER_ACCOUNT,
      allowPrivate: config.ALERTS_ALLOW_PRIVATE,
      signingKey: p.signing,
    },
  });
  const adminAuth = adminToken(config.ADMIN_TOKEN);
  const admin = createAdminRouter(p.ledger, adminAuth.token, config.SERVICE_PREFIX);
  app.use(admin.routes());
  app.use(p.metrics.router(config.ADMIN_TOKEN).routes());
  return { app, adminAuth };
}

/**
 * The HTTP server, listening. It keeps the requests being handled: a client that hangs up does not
 * stop its handler, which may still be settling a charge, so closing waits for the handlers, not
 * only for the connections.
 */
async function listen(handle: http.RequestListener, config: Config, log: Logger) {
  const handling = new Set<Promise<void>>();
  const server = http.createServer((req, res) => {
    const p: Promise<void> = Promise.resolve(handle(req, res))
      .then(
        () => undefined,
        () => undefined,
      )
      .finally(() => handling.delete(p));
    handling.add(p);
  });
  server.keepAliveTimeout = 5000;
  const refused = (a: { status: number; code: string | undefined; requestId: string }) =>
    log.info({ requestId: a.requestId, status: a.status, code: a.code }, 'refused before routing');
  server.on('clientError', (err: Error & { code?: string }, socket) => answerClientError(err, socket, refused));
  server.on('connect', (_req, socket) => answerConnect(socket, refused));
  server.on('checkExpectation', (_req, res) => answerExpectation(res, refused));
  const listening = new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.PORT, config.HOST, () => resolve());
  });
  return { server, handling, listening };
}

/** Where the server is reached: its own URL, and the address the MCP tools call (a wildcard listen address is reached on loopback). */
function addressesOf(host: string, port: number, prefix: string) {
  const bracketed = host.includes(':') ? `[${host}]` : host;
  const url = `http://${bracketed}:${port}`;
  const self = `http://${host === '0.0.0.0' ? '127.0.0.1' : host === '::' ? '[::1]' : bracketed}:${port}${prefix}`;
  return { url, base: `${url}${prefix}`, self };
}

/** Stop in order: no new generations, no new connections, handlers drained, then every part closed (bounded waits). */
async function closeServing(p: Parts, s: http.Server, handling: Set<Promise<void>>, unannounce: (() => Promise<void>) | null) {
  p.snapshots.stop();
  await new Promise<void>((resolve) => {
    s.close(() => resolve());
    s.closeIdleConnections();
  });
  await unannounce?.();
  await waitAtMost(Promise.all(handling), CLOSE_DRAIN_MS);
  // Running jobs finish (bounded); queued ones stay on disk and run after the next start.
  await waitAtMost(p.jobs.close(), CLOSE_DRAIN_MS);
  await waitAtMost(p.evaluator.idle(), CLOSE_DRAIN_MS);
  await p.outbox.close();
  await p.watches.close();
  await p.pool?.close();
  await p.emergentShare?.close();
  await p.media.close();
  await p.ledger.close();
}

/** A start that failed part way: close what was opened, ignoring what was not. */
async function closeAfterFailedStart(p: Parts, server: http.Server | null, unannounce: (() => Promise<void>) | null) {
  p.snapshots.stop();
  server?.close();
  await p.jobs.close();
  await p.outbox.close().catch(() => undefined);
  await p.watches.close().catch(() => undefined);
  await unannounce?.();
  await p.pool?.close();
  await p.emergentShare?.close().catch(() => undefined);
  await p.media.close();
  await p.ledger.close();
}

export async function startServer(config: Config, log: Logger): Promise<RunningServer> {
  const p = await makeParts(config, log);
  const { ledger, snapshots, pool, jobs } = p;
  let server: http.Server | null = null;
  let unannounce: (() => Promise<void>) | null = null;
  try {
    await p.emergentShare?.open();
    const { demo, created, file } = await ensureDemoAccount(ledger, config.dataDir, config.DEMO_CREDITS);
    await snapshots.start();
    // Which OS threads do what (Linux thread ids): the main thread answers HTTP, the workers search.
    log.info({ mainThread: osThreadId(), searchThreads: (await pool?.threadsKnown()) ?? [] }, 'threads');
    const startedAt = new Date();
    // Jobs left queued or running by the last process run again (job-runner.ts).
    await jobs.start();
    await p.watches.open();
    await p.outbox.open();
    const { app, adminAuth } = await appFor(p, config, log, startedAt);
    const alerts = { outbox: p.outbox, watches: p.watches };
    p.metrics.watch({ snapshots, dataDir: config.dataDir, answerCache: p.answerCache, searchPool: pool, jobs, alerts });
    const served = await listen(app.callback(), config, log);
    server = served.server;
    await served.listening;
    const { url, base, self } = addressesOf(config.HOST, (server.address() as AddressInfo).port, config.SERVICE_PREFIX);
    p.urls.base = base;
    p.urls.topUp ||= `${base}/billing/top-up`;
    p.urls.self = self;
    // With PostgreSQL the CLI writes to the ledger itself (any number of writers), so nothing is
    // announced: replicas sharing DATA_DIR would only overwrite each other's announcement.
    if (!config.DATABASE_URL)
      unannounce = await announceAdminEndpoint(p.layout.ledger, `${base}/admin`, adminAuth.generated ? adminAuth.token : undefined);
    // The served generation is evaluated now (a publish the last process did not get to), each later one after its swap.
    p.evaluator.attach(snapshots);
    snapshots.watch(config.SNAPSHOT_CHECK_MS);
    const s = server;
    let closing: Promise<void> | null = null;
    return {
      url,
      baseUrl: base,
      ledger,
      snapshots,
      searchPool: pool,
      answerCache: p.answerCache,
      jobs,
      alerts: { watches: p.watches, outbox: p.outbox, evaluator: p.evaluator },
      demo,
      demoCreated: created,
      demoFile: file,
      metrics: p.metrics,
      close: () => (closing ??= closeServing(p, s, served.handling, unannounce)),
    };
  } catch (err) {
    await closeAfterFailedStart(p, server, unannounce);
    throw err;
  }
}

/** A path as a person in the current directory reads it: ./data below it, the absolute path elsewhere. */
export function shownPath(p: string): string {
  const rel = path.relative(process.cwd(), p);
  return rel === '' ? '.' : rel.startsWith('..') || path.isAbsolute(rel) ? p : `./${rel}`;
}

/**
 * What a person starting the server needs next, printed once it serves: the demo key (its secret
 * only when just created), the base URL, one request to try, where the docs are, and how keys and
 * credits are managed while it runs. Plain text for a person; the logs stay JSON lines.
 */
export function startNotice(s: RunningServer, dataDirShown: string): string {
  const keyFile = shownPath(s.demoFile);
  const key = s.demoCreated ? s.demo.secret : `$(node -p "require('${keyFile}').secret")`;
  const gen = s.snapshots.generation;
  return [
    '',
    s.demoCreated
      ? `Demo account ${s.demo.account} created with its API key (shown once; saved in ${keyFile}):\n  x-api-key: ${s.demo.secret}`
      : `Demo API key: in ${keyFile}`,
    '',
    `Serving ${s.baseUrl}${gen ? `: generation ${gen.id}, ${gen.posts.toLocaleString('en-US')} posts, data directory ${dataDirShown}` : ''}`,
    `  look:  ${s.baseUrl}/ui/   (the dashboard: narratives, patterns, search; it asks for the key once)`,
    `  try:   curl -s -H "x-api-key: ${key}" '${s.baseUrl}/narratives/trending?window=7d&limit=5'`,
    `  docs:  README.md (every endpoint with a curl example), docs/api.md, ${s.baseUrl}/openapi.json`,
    `  keys:  ${dataDirPrefix(dataDirShown)}npm run admin -- accounts create --name "Acme"   (keys and credits while this runs; docs/ledger.md)`,
    '  stop:  Ctrl-C (requests in flight finish first)',
    '',
  ].join('\n');
}
