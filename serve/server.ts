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
import { adminToken, announceAdminEndpoint, createAdminRouter } from '../ledger/admin/admin-api.ts';
import { dataDirPrefix } from '../ledger/backend-record.ts';
import type { LedgerStore } from '../ledger/ledger-store.ts';
import { openLedgerStore } from '../ledger/open-ledger-store.ts';
import { createApp, type AppParts } from './app.ts';
import { answerClientError, answerConnect, answerExpectation } from './http/client-error.ts';
import { ensureDemoAccount, type DemoKey } from './billing/demo-account.ts';
import type { JobRunner } from './jobs/job-runner.ts';
import { jobParts } from './jobs/job-parts.ts';
import type { SearchPool } from './search/search-pool.ts';
import type { SearchEngine } from './search/search-engine.ts';
import { searchParts } from './search/search-parts.ts';
import { osThreadId } from '../core/infra/workers/os-thread.ts';
import type { AnswerCache } from './search/answer-cache.ts';
import { SnapshotStore } from './generation/snapshot-store.ts';
import { ReadCache } from './maps/read-cache.ts';
import { MediaEntries } from './media/media-entries.ts';
import { ServiceMetrics } from './metrics/service-metrics.ts';
import { alertParts, type AlertParts } from './alerts/alert-parts.ts';

export interface RunningServer {
  url: string;
  baseUrl: string;
  ledger: LedgerStore;
  snapshots: SnapshotStore;
  /** What answers searches: the worker pool, or this thread with SEARCH_THREADS=0. */
  searchEngine: SearchEngine;
  /** The search workers (null with SEARCH_THREADS=0). */
  searchPool: SearchPool | null;
  /** Answers of identical searches (SEARCH_CACHE_MB; disabled at 0). */
  answerCache: AnswerCache;
  /** The free map reads' kept answers (READ_CACHE_MB; nothing kept at 0). */
  readCache: ReadCache;
  jobs: JobRunner;
  /** Alert watches, their events' outbox, and the evaluation after each publish. */
  alerts: AlertParts;
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

/** What the server is made of (each built by its folder's own factory), opened in this order and closed in the reverse. */
interface Parts extends AppParts {
  layout: ReturnType<typeof dataDirLayout>;
  metrics: ServiceMetrics;
  alerts: AlertParts;
  /** The free map reads' kept answers (READ_CACHE_MB). */
  reads: ReadCache;
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
  const search = searchParts(config, log);
  // The engine loads each generation (with a pool, its workers take the big parts as it loads),
  // and the store warms each new one up before it is served: the answer cache starts with the warm-up's answers.
  const snapshots = new SnapshotStore(config.dataDir, log, search.engine, (gen) => search.warmUp.warm(gen));
  snapshots.onSwap((gen) => search.cache.swapTo(gen.id, search.warmUp.take(gen.id)));
  const urls = { base: '', self: '', topUp: config.TOP_UP_URL ?? '' };
  const jobs = jobParts(config, log, { ledger, snapshots, topUpUrl: () => urls.topUp, observeRun: metrics.jobs.observeRun });
  // Events link to narratives at PUBLIC_BASE_URL (the address clients use, behind a proxy), else where this server listens.
  const alerts = await alertParts(config, log, {
    layout,
    baseUrl: () => config.PUBLIC_BASE_URL ?? urls.base,
    deliveries: metrics.deliveries,
    onEvaluated: metrics.alerts.evaluated,
  });
  const reads = new ReadCache(config.READ_CACHE_MB * 1024 * 1024);
  return { layout, metrics, ledger, search, snapshots, jobs, media: new MediaEntries(), alerts, reads, urls };
}

/** The application with the ledger's admin endpoint and /metrics mounted beside it. */
function appFor(p: Parts, config: Config, log: Logger, startedAt: Date) {
  const app = createApp(p, {
    log,
    prefix: config.SERVICE_PREFIX,
    startedAt,
    rateLimit: { perSecond: config.RATE_LIMIT_RPS, burst: config.RATE_LIMIT_BURST },
    keyVerdictMs: config.KEY_VERDICT_SECONDS * 1000,
    accessLog: config.ACCESS_LOG === 'on' || (config.ACCESS_LOG === 'auto' && !process.stdout.isTTY),
    dataDir: config.dataDir,
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
  await p.alerts.close(CLOSE_DRAIN_MS);
  await p.search.engine.close();
  await p.search.emergentShare?.close();
  await p.media.close();
  await p.ledger.close();
}

/** A start that failed part way: close what was opened, ignoring what was not. */
async function closeAfterFailedStart(p: Parts, server: http.Server | null, unannounce: (() => Promise<void>) | null) {
  p.snapshots.stop();
  server?.close();
  await p.jobs.close();
  await p.alerts.closeAfterFailedStart();
  await unannounce?.();
  await p.search.engine.close();
  await p.search.emergentShare?.close().catch(() => undefined);
  await p.media.close();
  await p.ledger.close();
}

export async function startServer(config: Config, log: Logger): Promise<RunningServer> {
  const p = await makeParts(config, log);
  const { ledger, snapshots, search, jobs, alerts } = p;
  let server: http.Server | null = null;
  let unannounce: (() => Promise<void>) | null = null;
  try {
    await search.emergentShare?.open();
    const { demo, created, file } = await ensureDemoAccount(ledger, config.dataDir, config.DEMO_CREDITS);
    await snapshots.start();
    // Which OS threads do what (Linux thread ids): the main thread answers HTTP, the workers search.
    log.info({ mainThread: osThreadId(), searchThreads: (await search.pool?.threadsKnown()) ?? [] }, 'threads');
    const startedAt = new Date();
    // Jobs left queued or running by the last process run again (job-runner.ts).
    await jobs.start();
    await alerts.open();
    const { app, adminAuth } = appFor(p, config, log, startedAt);
    p.metrics.watch({ snapshots, dataDir: config.dataDir, answerCache: search.cache, searchPool: search.pool, jobs, alerts });
    const served = await listen(app.callback(), config, log);
    server = served.server;
    await served.listening;
    const { url, base, self } = addressesOf(config.HOST, (server.address() as AddressInfo).port, config.SERVICE_PREFIX);
    p.urls.base = base;
    // The default top-up address is the server's own /billing/top-up, which says how credits are added.
    p.urls.topUp ||= `${base}/billing/top-up`;
    p.urls.self = self;
    // With PostgreSQL the CLI writes to the ledger itself (any number of writers), so nothing is
    // announced: replicas sharing DATA_DIR would only overwrite each other's announcement.
    if (!config.DATABASE_URL)
      unannounce = await announceAdminEndpoint(p.layout.ledger, `${base}/admin`, adminAuth.generated ? adminAuth.token : undefined);
    // The served generation is evaluated now (a publish the last process did not get to), each later one after its swap.
    alerts.evaluator.attach(snapshots);
    snapshots.watch(config.SNAPSHOT_CHECK_MS);
    const s = server;
    let closing: Promise<void> | null = null;
    return {
      url,
      baseUrl: base,
      ledger,
      snapshots,
      searchEngine: search.engine,
      searchPool: search.pool,
      answerCache: search.cache,
      readCache: p.reads,
      jobs,
      alerts,
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
