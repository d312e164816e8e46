// Proof under a PostgreSQL outage (docs/scaling.md, "A database outage"): two real server
// processes (serve/main.ts) over one DATA_DIR and one real PostgreSQL of their own, billed
// searches with Idempotency-Keys (and records jobs) sent to both against one account, free reads
// polled on both; then PostgreSQL is taken away (SIGKILL of the postmaster, or a fast shutdown)
// for `outageMs` and started again on the same data. A client retries a search that did not get
// its 200 with the same key until it does. Read afterwards from the replicas and the database:
// both replicas alive throughout; every key answered, and how long after the database came back;
// free reads answered 200 through the outage; holds open after recovery, and when none was;
// every acknowledged charge in the ledger once with its amount, balance = top-ups - settlements.
// Used by test/slow/pg-outage.test.ts and `npm run bench -- outage`.
import fs from 'node:fs';
import path from 'node:path';
import { createPool } from '../core/infra/postgres/pool.ts';
import { pollUntil } from '../core/infra/wait-at-most.ts';
import { DEMO_KEY_FILES } from '../serve/billing/demo-account.ts';
import { startPostgres, type LocalPostgres } from './postgres/embedded.ts';
import {
  auditLedger,
  call,
  finishedJobs,
  linkTemplate,
  startReplica,
  stopReplica,
  type Acked,
  type Replica,
  type SentJob,
  type Side,
} from './replica-trial.ts';

interface OutageTrialOptions {
  /** A DATA_DIR with a published generation (linked, not copied). */
  template: string;
  /** Where the trial's PostgreSQL and data directory go (removed at the end). */
  workDir: string;
  how: 'kill' | 'fast';
  outageMs: number;
  /** Billed clients per replica. */
  clients?: number;
  /** How long after recovery every key must be answered and no hold be open (the bar: 30 s). */
  boundMs?: number;
}

export interface OutageTrialResult {
  how: 'kill' | 'fast';
  outageMs: number;
  /** Both replica processes still running at the end (never exited). */
  replicasAlive: boolean;
  exits: string[];
  /** Idempotency-Keys sent, answered 200 in the end, and those not answered within the bound. */
  keys: number;
  answered: number;
  unanswered: number;
  /** Keys that met an error (not a 200) at least once, and of those the slowest answer after recovery, ms. */
  keysHitByOutage: number;
  slowestAfterRecoveryMs: number;
  /** What billed calls were answered during the outage, by status. */
  billedDuringOutage: Record<string, number>;
  /** Free reads (trending, a narrative, /health) during the outage: sent, and not 200. */
  freeReadsDuringOutage: number;
  freeReadsFailed: number;
  /** /readyz while the database was surely away (asked and answered then), and after it: 503, then 200 again. */
  readyDuringOutage: Record<string, number>;
  readyAfter: boolean;
  jobs: number;
  jobsSucceeded: number;
  /** Holds open `boundMs` after recovery, and when the last closed (ms after recovery). */
  openHoldsAfterBound: number;
  holdsClosedMs: number;
  lost: number;
  chargedTwice: number;
  balanceMismatch: boolean;
  negative: boolean;
  /** Lines of the replicas' logs where an unhandled rejection was caught (the last guard). */
  unhandled: number;
  details: string[];
}

const QUERIES = ['coffee', 'school supplies', 'music', 'sourdough starter', 'back to school', 'protein', 'travel', 'skincare routine'];
const WINDOWS = ['7d', '30d', '90d', 'all'];
const RETRY_MS = 300;

interface Key {
  on: Side;
  idem: string;
  body: unknown;
  sentAt: number;
  failures: number;
  answeredAt: number | null;
  nextTry: number;
}

interface Clock {
  /** When the database was taken away and when it answered again (0 until then). */
  downAt: number;
  upAt: number;
  /** From when it was surely gone (its processes exited) until its start again was asked for. */
  goneAt: number;
  resumingAt: number;
  stopNew: boolean;
  stopAll: boolean;
}

const during = (c: Clock, t: number) => c.downAt > 0 && t >= c.downAt && (c.upAt === 0 || t < c.upAt);
const tally = (m: Record<string, number>, k: string | number) => (m[String(k)] = (m[String(k)] ?? 0) + 1);

/** A billed client on one replica: new keys while the load runs, keys not yet answered retried with the same key. */
async function billedClient(
  r: Replica,
  on: Side,
  apiKey: string,
  clock: Clock,
  keys: Key[],
  acked: Acked[],
  jobs: SentJob[],
  billed: Record<string, number>,
  seq: { n: number },
): Promise<void> {
  const mine: Key[] = [];
  while (!clock.stopAll) {
    const now = Date.now();
    let k = mine.find((x) => x.answeredAt === null && x.nextTry <= now);
    if (!k && clock.stopNew) {
      if (mine.every((x) => x.answeredAt !== null)) return;
      await new Promise((resolve) => setTimeout(resolve, 50));
      continue;
    }
    if (!k) {
      const i = seq.n++;
      if (i % 9 === 4) {
        const body = { kind: 'records', query: QUERIES[i % QUERIES.length], limit: 10 + (i % 20), window: 'all' };
        const res = await call(r.baseUrl, apiKey, 'POST', '/intelligence/jobs', body).catch(() => null);
        if (res && (res.status === 202 || res.status === 200)) jobs.push({ on, jobId: res.json.jobId, requestId: res.json.request_id });
        continue;
      }
      const body = { query: QUERIES[i % QUERIES.length], limit: 5 + (i % 46), window: WINDOWS[i % WINDOWS.length] };
      k = { on, idem: `outage-${i}`, body, sentAt: now, failures: 0, answeredAt: null, nextTry: now };
      mine.push(k);
      keys.push(k);
    }
    const res = await call(r.baseUrl, apiKey, 'POST', '/search', k.body, { 'Idempotency-Key': k.idem }).catch(() => null);
    const t = Date.now();
    if (during(clock, t)) tally(billed, res?.status ?? 'no answer');
    if (res?.status === 200) {
      k.answeredAt = t;
      acked.push({ on, idem: k.idem, body: k.body, text: res.text, requestId: res.json.request_id, credits: res.json.usage.credits });
    } else {
      k.failures++;
      k.nextTry = t + RETRY_MS;
    }
  }
}

/** Free reads and the readiness probe on one replica, every 100 ms, until the load stops. */
async function freeReader(r: Replica, apiKey: string, clock: Clock, out: { sent: number; failed: number; ready: Record<string, number> }) {
  const trending = await call(r.baseUrl, apiKey, 'GET', '/narratives/trending?window=all&limit=5');
  const id = trending.json?.items?.[0]?.id as string | undefined;
  const paths = [
    '/narratives/trending?window=all&limit=5',
    ...(id ? [`/narratives/${id}`] : []),
    '/health',
    '/narratives/trending?window=30d',
  ];
  let i = 0;
  while (!clock.stopAll) {
    const p = paths[i++ % paths.length]!;
    const res = await call(r.baseUrl, apiKey, 'GET', p).catch(() => null);
    const t = Date.now();
    if (during(clock, t)) {
      out.sent++;
      if (res?.status !== 200) out.failed++;
      const asked = Date.now();
      const ready = await fetch(`${r.baseUrl}/readyz`).then(
        (x) => x.status,
        () => 0,
      );
      const surelyDown = (x: number) => clock.goneAt > 0 && x >= clock.goneAt && (clock.resumingAt === 0 || x < clock.resumingAt);
      if (surelyDown(asked) && surelyDown(Date.now())) tally(out.ready, ready);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/**
 * Once 40 searches were answered: the database taken away for `outageMs` and started again, the
 * load going on 2 s past it, then only the keys not yet answered retried (until `boundMs`).
 */
async function outage(
  server: LocalPostgres,
  o: OutageTrialOptions,
  clock: Clock,
  keys: readonly Key[],
  acked: readonly Acked[],
  details: string[],
  boundMs: number,
): Promise<void> {
  const deadline = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
  await pollUntil('searches answered before the outage', () => acked.length >= 40, 120_000, 20);
  clock.downAt = Date.now();
  await server.interrupt(o.how);
  clock.goneAt = Date.now();
  await deadline(Math.max(0, clock.downAt + o.outageMs - Date.now()));
  clock.resumingAt = Date.now();
  await server.resume();
  clock.upAt = Date.now();
  await deadline(2_000);
  clock.stopNew = true;
  await pollUntil('every key answered', () => keys.every((k) => k.answeredAt !== null), boundMs, 50).catch((err: Error) =>
    details.push(err.message),
  );
  clock.stopAll = true;
}

export async function outageTrial(o: OutageTrialOptions): Promise<OutageTrialResult> {
  const boundMs = o.boundMs ?? 30_000;
  const pgDir = path.join(o.workDir, `outage-pg-${process.pid}-${Date.now()}`);
  const server = await startPostgres({ dir: pgDir });
  const dataDir = linkTemplate(o.template, o.workDir);
  const details: string[] = [];
  const replicas: Replica[] = [];
  let db: ReturnType<typeof createPool> | null = null;
  try {
    const url = await server.createDatabase('outage');
    const env = { DEMO_CREDITS: '100000', LEDGER_LEASE_MS: '5000', JOB_EXPIRE_SECONDS: '5', JOB_CONCURRENCY: '2', LOG_LEVEL: 'warn' };
    // Started together, as an orchestrator would, on a database nothing has made anything in yet.
    const [a, b] = await Promise.all([startReplica(dataDir, url, env), startReplica(dataDir, url, env)]);
    replicas.push(a!, b!);
    const exits: string[] = [];
    let ending = false;
    for (const [i, r] of replicas.entries())
      r.proc.once('exit', (code, signal) => {
        if (!ending) exits.push(`replica ${i + 1} exited (${signal ?? code}): ${r.out().slice(-1500)}`);
      });
    const apiKey = (JSON.parse(fs.readFileSync(path.join(dataDir, DEMO_KEY_FILES.postgres), 'utf8')) as { secret: string }).secret;
    const clock: Clock = { downAt: 0, upAt: 0, goneAt: 0, resumingAt: 0, stopNew: false, stopAll: false };
    const keys: Key[] = [];
    const acked: Acked[] = [];
    const jobs: SentJob[] = [];
    const billed: Record<string, number> = {};
    const reads = { sent: 0, failed: 0, ready: {} as Record<string, number> };
    const seq = { n: 0 };
    const clients = o.clients ?? 4;
    const loops = replicas.flatMap((r, i) => [
      ...Array.from({ length: clients }, () => billedClient(r, i === 0 ? 'a' : 'b', apiKey, clock, keys, acked, jobs, billed, seq)),
      freeReader(r, apiKey, clock, reads),
    ]);
    await outage(server, o, clock, keys, acked, details, boundMs);
    await Promise.all(loops);
    const readyAfter = (
      await Promise.all(
        replicas.map((r) =>
          fetch(`${r.baseUrl}/readyz`).then(
            (x) => x.status === 200,
            () => false,
          ),
        ),
      )
    ).every(Boolean);
    const finished = await finishedJobs(replicas[1]!, apiKey, jobs);
    db = createPool(url, { max: 1 });
    const openHolds = async () => (await db!.query<{ n: number }>('SELECT count(*)::int AS n FROM ledger.holds')).rows[0]!.n;
    const sinceUp = () => Date.now() - clock.upAt;
    await pollUntil('no hold open', async () => (await openHolds()) === 0, Math.max(1, boundMs - sinceUp()), 50).catch(() => undefined);
    const holdsClosedMs = (await openHolds()) === 0 ? sinceUp() : -1;
    const openHoldsAfterBound = await openHolds();
    const audit = await auditLedger(db, acked, jobs, finished, details);
    const hit = keys.filter((k) => k.failures > 0);
    const unanswered = keys.filter((k) => k.answeredAt === null || k.answeredAt - clock.upAt > boundMs);
    for (const k of unanswered.slice(0, 5)) details.push(`key ${k.idem} (${k.on}) not answered within ${boundMs} ms of recovery`);
    const alive = replicas.every((r) => r.proc.exitCode === null && r.proc.signalCode === null);
    ending = true;
    return {
      how: o.how,
      outageMs: clock.upAt - clock.downAt,
      replicasAlive: alive && exits.length === 0,
      exits,
      keys: keys.length,
      answered: keys.filter((k) => k.answeredAt !== null).length,
      unanswered: unanswered.length,
      keysHitByOutage: hit.length,
      slowestAfterRecoveryMs: Math.max(0, ...hit.filter((k) => k.answeredAt !== null).map((k) => k.answeredAt! - clock.upAt)),
      billedDuringOutage: billed,
      freeReadsDuringOutage: reads.sent,
      freeReadsFailed: reads.failed,
      readyDuringOutage: reads.ready,
      readyAfter,
      jobs: jobs.length,
      jobsSucceeded: audit.jobsSucceeded,
      openHoldsAfterBound,
      holdsClosedMs,
      lost: audit.lost,
      chargedTwice: audit.chargedTwice,
      balanceMismatch: audit.balanceMismatch,
      negative: audit.negative,
      unhandled: replicas.reduce((n, r) => n + (r.out().match(/unhandled rejection/g)?.length ?? 0), 0),
      details,
    };
  } finally {
    await db?.end();
    for (const r of replicas) await stopReplica(r);
    await server.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
    fs.rmSync(pgDir, { recursive: true, force: true });
  }
}
