// Proof under failure for several API replicas (issue "Beyond one machine"; docs/scaling.md): two
// real server processes (serve/main.ts) over one DATA_DIR and one PostgreSQL, billed searches
// (each with an Idempotency-Key) and jobs sent to both against one account, one replica killed
// with SIGKILL mid-load while the other carries on. Then, read from the survivor and from the
// database: every acknowledged charge present with its amount, no request or job charged twice,
// no hold open once the dead replica's lease ran out, balance = top-ups - settlements, never
// negative; and an Idempotency-Key of a search the dead replica answered, replayed on the
// survivor, returns the original answer. Used by test/slow/replicas.test.ts and `npm run bench -- replicas`.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { createPool } from '../core/infra/postgres/pool.ts';
import { pollUntil } from '../core/infra/wait-at-most.ts';
import { DEMO_KEY_FILES } from '../serve/billing/demo-account.ts';

const ROOT = path.resolve(import.meta.dirname, '..');

export interface Replica {
  proc: ChildProcess;
  baseUrl: string;
  out(): string;
  exited: Promise<void>;
}

/** Start serve/main.ts over `dataDir` and `databaseUrl`; resolves once it listens. */
export async function startReplica(dataDir: string, databaseUrl: string, env: Record<string, string> = {}): Promise<Replica> {
  const proc = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'serve', 'main.ts')], {
    cwd: ROOT,
    env: {
      ...process.env,
      DATA_DIR: dataDir,
      DATABASE_URL: databaseUrl,
      PORT: '0',
      HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
      RATE_LIMIT_RPS: '100000',
      RATE_LIMIT_BURST: '100000',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let buf = '';
  proc.stdout!.on('data', (d) => (buf = (buf + d).slice(-200_000)));
  proc.stderr!.on('data', (d) => (buf = (buf + d).slice(-200_000)));
  const exited = new Promise<void>((resolve) => proc.on('close', () => resolve()));
  const baseUrl = await new Promise<string>((resolve, reject) => {
    const timer = setInterval(() => {
      const m = /^Serving (http\S+):/m.exec(buf);
      if (m) (clearInterval(timer), resolve(m[1]!));
      else if (proc.exitCode !== null) (clearInterval(timer), reject(new Error(`replica did not start:\n${buf.slice(-3000)}`)));
    }, 20);
  });
  return { proc, baseUrl, out: () => buf, exited };
}

export async function stopReplica(r: Replica, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  if (r.proc.exitCode === null && r.proc.signalCode === null) r.proc.kill(signal);
  await r.exited;
}

interface Call {
  status: number;
  json: any;
  text: string;
  headers: Headers;
}

export async function call(
  baseUrl: string,
  key: string,
  method: string,
  p: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<Call> {
  const res = await fetch(`${baseUrl}${p}`, {
    method,
    headers: { 'x-api-key': key, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  let json: any = null;
  try {
    json = JSON.parse(text);
  } catch {
    json = null;
  }
  return { status: res.status, json, text, headers: res.headers };
}

interface ReplicaTrialResult {
  searches: number;
  searchesOnKilled: number;
  jobs: number;
  jobsSucceeded: number;
  /** Acknowledged charges (a 200 search's usage, a succeeded job's charge) not found in the ledger, or found with another amount. */
  lost: number;
  /** Requests or jobs with more than one settlement. */
  chargedTwice: number;
  openHoldsAfter: number;
  /** From the kill until no hold was open, ms. */
  holdsReleasedMs: number;
  balanceMismatch: boolean;
  negative: boolean;
  replayOk: boolean;
  details: string[];
}

interface ReplicaTrialOptions {
  /** A DATA_DIR with a published generation (read in place: the trial's ledger, jobs and demo key are its own). */
  template: string;
  databaseUrl: string;
  /** Concurrent clients per replica. */
  clients?: number;
  /** Kill the first replica once this many of its searches were acknowledged. */
  killAfter?: number;
  /** Searches the survivor answers after the kill before the load stops. */
  after?: number;
  workDir: string;
}

const QUERIES = ['coffee', 'school supplies', 'music', 'sourdough starter', 'back to school', 'protein', 'travel', 'skincare routine'];
const WINDOWS = ['7d', '30d', '90d', 'all'];

export type Side = 'a' | 'b';
export interface Acked {
  on: Side;
  idem: string;
  body: unknown;
  text: string;
  requestId: string;
  credits: number;
}
export interface SentJob {
  on: Side;
  jobId: string;
  requestId: string;
}
interface LedgerEntry {
  type: string;
  account_id: string;
  ref: string | null;
  amount_micro: number;
  balance_after: number;
}

/**
 * The trial's DATA_DIR: the template's generation, linked not copied (servers only read it; with
 * DATABASE_URL the ledger and jobs live in PostgreSQL): a trial costs no copy of a large generation.
 */
export function linkTemplate(template: string, workDir: string): string {
  const dataDir = path.join(workDir, `trial-${process.pid}-${Date.now()}`);
  fs.mkdirSync(dataDir, { recursive: true });
  for (const entry of fs.readdirSync(template))
    if (!['ledger', 'jobs', 'postgres', ...Object.values(DEMO_KEY_FILES)].includes(entry))
      fs.symlinkSync(path.join(template, entry), path.join(dataDir, entry));
  return dataDir;
}

/**
 * `clients` loops per replica sending searches (every ninth request a job) until the load stops;
 * `a` is killed with SIGKILL once `killAfter` of its searches were acknowledged, and the load stops
 * `after` more searches later. What was acknowledged, the jobs accepted, and when the kill was.
 */
async function loadAndKill(
  a: Replica,
  b: Replica,
  key: string,
  clients: number,
  killAfter: number,
  after: number,
): Promise<{ acked: Acked[]; jobs: SentJob[]; killedAt: number }> {
  const acked: Acked[] = [];
  const jobs: SentJob[] = [];
  let stop = false;
  let killedAt = 0;
  let n = 0;
  const loop = async (r: Replica, on: Side) => {
    while (!stop) {
      const i = n++;
      if (on === 'a' && killedAt) return;
      try {
        if (i % 9 === 4) {
          const res = await call(r.baseUrl, key, 'POST', '/intelligence/jobs', {
            kind: 'records',
            query: QUERIES[i % QUERIES.length],
            limit: 10 + (i % 20),
            window: 'all',
          });
          if (res.status === 202 || res.status === 200) jobs.push({ on, jobId: res.json.jobId, requestId: res.json.request_id });
          continue;
        }
        const body = { query: QUERIES[i % QUERIES.length], limit: 5 + (i % 46), window: WINDOWS[i % WINDOWS.length] };
        const idem = `trial-${i}`;
        const res = await call(r.baseUrl, key, 'POST', '/search', body, { 'Idempotency-Key': idem });
        if (res.status === 200)
          acked.push({ on, idem, body, text: res.text, requestId: res.json.request_id, credits: res.json.usage.credits });
      } catch {
        // The connection died with the replica: not acknowledged.
        if (on === 'a') return;
      }
    }
  };
  const loops = [...Array.from({ length: clients }, () => loop(a, 'a')), ...Array.from({ length: clients }, () => loop(b, 'b'))];
  await pollUntil(`${killAfter} searches on the first replica`, () => acked.filter((x) => x.on === 'a').length >= killAfter, 120_000, 50);
  killedAt = Date.now();
  a.proc.kill('SIGKILL');
  await a.exited;
  const seen = acked.length;
  await pollUntil(`${after} more searches on the survivor`, () => acked.length >= seen + after, 120_000, 50);
  stop = true;
  await Promise.all(loops);
  return { acked, jobs, killedAt };
}

/** Every job's final status on the survivor (one the dead replica was running is delivered again once its run expires). */
export async function finishedJobs(b: Replica, key: string, jobs: readonly SentJob[]): Promise<Map<string, any>> {
  const finished = new Map<string, any>();
  await pollUntil(
    'every job to finish',
    async () => {
      for (const j of jobs) {
        if (finished.has(j.jobId)) continue;
        const s = await call(b.baseUrl, key, 'GET', `/intelligence/jobs/${j.jobId}`);
        if (s.status === 200 && (s.json.status === 'succeeded' || s.json.status === 'failed')) finished.set(j.jobId, s.json);
      }
      return finished.size === jobs.length;
    },
    120_000,
    50,
  );
  return finished;
}

/** Acknowledged charges missing from the ledger or of another amount (each told in `details`), and the jobs that succeeded. */
function lostCharges(
  settlements: ReadonlyMap<string, number[]>,
  acked: readonly Acked[],
  jobs: readonly SentJob[],
  finished: ReadonlyMap<string, any>,
  details: string[],
): { lost: number; jobsSucceeded: number } {
  let lost = 0;
  for (const s of acked) {
    const got = settlements.get(s.requestId) ?? [];
    if (got.length !== 1 || got[0] !== Math.round(s.credits * 1e6)) {
      lost++;
      details.push(`search ${s.requestId} (${s.on}) charged ${s.credits}: ledger has ${JSON.stringify(got)}`);
    }
  }
  let jobsSucceeded = 0;
  for (const j of jobs) {
    const f = finished.get(j.jobId);
    const got = [...(settlements.get(j.requestId) ?? []), ...(settlements.get(j.jobId) ?? [])];
    if (f.status === 'succeeded') jobsSucceeded++;
    // A cache hit served free (nothing to charge) writes no settlement; every other success one.
    const expected = f.status === 'succeeded' && !(f.cached && f.charged === 0) ? [Math.round(f.charged * 1e6)] : [];
    if (JSON.stringify(got) !== JSON.stringify(expected)) {
      lost++;
      details.push(`job ${j.jobId} (${j.on}, ${f.status}, charged ${f.charged}): ledger has ${JSON.stringify(got)}`);
    }
  }
  return { lost, jobsSucceeded };
}

/** The ledger read from PostgreSQL against what the clients saw. */
export async function auditLedger(
  db: ReturnType<typeof createPool>,
  acked: readonly Acked[],
  jobs: readonly SentJob[],
  finished: ReadonlyMap<string, any>,
  details: string[],
): Promise<Pick<ReplicaTrialResult, 'lost' | 'jobsSucceeded' | 'chargedTwice' | 'balanceMismatch' | 'negative'>> {
  const entries = (
    await db.query<LedgerEntry>('SELECT type, account_id, ref, amount_micro, balance_after FROM ledger.entries ORDER BY seq')
  ).rows;
  const settlements = new Map<string, number[]>();
  for (const e of entries) if (e.type === 'settlement') settlements.set(e.ref!, [...(settlements.get(e.ref!) ?? []), e.amount_micro]);
  const { lost, jobsSucceeded } = lostCharges(settlements, acked, jobs, finished, details);
  const chargedTwice = [...settlements.values()].filter((l) => l.length > 1).length;
  const account = await db.query<{ balance_micro: number; held_micro: number }>('SELECT balance_micro, held_micro FROM ledger.accounts');
  const expected = entries.reduce((s, e) => s + (e.type === 'topup' ? e.amount_micro : e.type === 'settlement' ? -e.amount_micro : 0), 0);
  const balanceMismatch = account.rows.length !== 1 || account.rows[0]!.balance_micro !== expected || account.rows[0]!.held_micro !== 0;
  if (balanceMismatch) details.push(`account ${JSON.stringify(account.rows)}, entries say ${expected}`);
  const negative = entries.some((e) => e.balance_after < 0);
  return { lost, jobsSucceeded, chargedTwice, balanceMismatch, negative };
}

/** A search the dead replica answered, its Idempotency-Key replayed on the survivor: the original answer again? */
async function replayOnSurvivor(b: Replica, key: string, acked: readonly Acked[], details: string[]): Promise<boolean> {
  const fromA = acked.find((x) => x.on === 'a');
  if (!fromA) return false;
  const again = await call(b.baseUrl, key, 'POST', '/search', fromA.body, { 'Idempotency-Key': fromA.idem });
  const replayOk = again.status === 200 && again.headers.get('idempotent-replayed') === 'true' && again.text === fromA.text;
  if (!replayOk) details.push(`replay of ${fromA.idem} on the survivor: ${again.status} ${again.text.slice(0, 200)}`);
  return replayOk;
}

/**
 * One trial. `databaseUrl` must name an empty database of its own (the demo account, its ledger
 * and its jobs start there).
 */
export async function replicaKillTrial(o: ReplicaTrialOptions): Promise<ReplicaTrialResult> {
  const dataDir = linkTemplate(o.template, o.workDir);
  const env = { DEMO_CREDITS: '1000', LEDGER_LEASE_MS: '1000', JOB_EXPIRE_SECONDS: '3', JOB_CONCURRENCY: '2' };
  const a = await startReplica(dataDir, o.databaseUrl, env);
  let b: Replica | null = null;
  const db = createPool(o.databaseUrl, { max: 1 });
  try {
    b = await startReplica(dataDir, o.databaseUrl, env);
    const key = (JSON.parse(fs.readFileSync(path.join(dataDir, DEMO_KEY_FILES.postgres), 'utf8')) as { secret: string }).secret;
    const { acked, jobs, killedAt } = await loadAndKill(a, b, key, o.clients ?? 6, o.killAfter ?? 40, o.after ?? 40);
    const details: string[] = [];
    const finished = await finishedJobs(b, key, jobs);
    const survivor = b;
    await pollUntil(
      'no hold open',
      async () => (await call(survivor.baseUrl, key, 'GET', '/health')).json?.ledger?.open_holds === 0,
      60_000,
      50,
    ).catch((err: Error) => details.push(err.message));
    const holdsReleasedMs = Date.now() - killedAt;
    const health = await call(b.baseUrl, key, 'GET', '/health');
    const audit = await auditLedger(db, acked, jobs, finished, details);
    const replayOk = await replayOnSurvivor(b, key, acked, details);
    return {
      searches: acked.length,
      searchesOnKilled: acked.filter((x) => x.on === 'a').length,
      jobs: jobs.length,
      jobsSucceeded: audit.jobsSucceeded,
      lost: audit.lost,
      chargedTwice: audit.chargedTwice,
      openHoldsAfter: health.json?.ledger?.open_holds ?? -1,
      holdsReleasedMs,
      balanceMismatch: audit.balanceMismatch,
      negative: audit.negative,
      replayOk,
      details,
    };
  } finally {
    await db.end();
    await stopReplica(a, 'SIGKILL');
    if (b) await stopReplica(b);
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}
