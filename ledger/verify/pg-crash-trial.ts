// The PostgreSQL ledger's crash check, run by its tests and by `npm run bench -- ledger --backend
// postgres`. One trial: `replicas` real child processes (load-child.ts with DATABASE_URL) load one
// account at once; once they have acknowledged `killAfterAcks` operations the first is killed
// with SIGKILL, the others go on until they have acknowledged as many again, then they are
// killed too. A surviving replica (this process) must then release every hold the dead ones left
// open once their lease expires, and the database must hold every acknowledged operation, no
// hold resolved twice, and balance = top-ups - settlements, never negative.
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { createPool } from '../../core/infra/postgres/pool.ts';
import { PgLedgerStore } from '../postgres/pg-ledger-store.ts';
import { pollUntil } from '../../core/infra/wait-at-most.ts';
import { toMicro } from '../money.ts';

const ROOT = path.resolve(import.meta.dirname, '..', '..');

interface PgTrialResult {
  acked: number;
  lost: number;
  /** Holds still open when the trial gave up waiting for the leases (should be 0). */
  openHoldsAfter: number;
  /** Refunds written by the survivor for holds of the dead replicas. */
  releasedByLease: number;
  /** From the last kill until no hold was open, ms. */
  releaseMs: number;
  doubleResolved: number;
  balanceMismatch: boolean;
  negative: boolean;
  details: string[];
}

interface PgTrialOptions {
  databaseUrl: string;
  replicas: number;
  concurrency: number;
  killAfterAcks: number;
  leaseMs: number;
  timeoutMs?: number;
}

interface Replica {
  proc: ChildProcess;
  lines: string[];
  exited: Promise<void>;
}

function startReplica(o: PgTrialOptions, account: string): Replica {
  const proc = spawn(
    process.execPath,
    ['--import', 'tsx', path.join(import.meta.dirname, 'load-child.ts'), '-', account, String(o.concurrency)],
    {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, DATABASE_URL: o.databaseUrl, LEDGER_LEASE_MS: String(o.leaseMs) },
    },
  );
  const r: Replica = { proc, lines: [], exited: new Promise((resolve) => proc.on('close', () => resolve())) };
  let partial = '';
  proc.stdout!.on('data', (d: Buffer) => {
    const text = partial + d.toString('utf8');
    const cut = text.lastIndexOf('\n');
    partial = text.slice(cut + 1);
    if (cut >= 0) for (const l of text.slice(0, cut).split('\n')) if (l.startsWith('ACK ')) r.lines.push(l);
  });
  let err = '';
  proc.stderr!.on('data', (d: Buffer) => (err = (err + d.toString('utf8')).slice(-2000)));
  proc.on('close', (code, signal) => {
    if (signal !== 'SIGKILL') r.lines.push(`EXIT ${code} ${signal} ${err}`);
  });
  return r;
}

export async function pgCrashTrial(o: PgTrialOptions): Promise<PgTrialResult> {
  const timeoutMs = o.timeoutMs ?? 60_000;
  const survivor = await PgLedgerStore.open({ databaseUrl: o.databaseUrl, leaseMs: o.leaseMs });
  const pool = createPool(o.databaseUrl, { max: 2 });
  const replicas: Replica[] = [];
  try {
    const account = (await survivor.createAccount('load')).id;
    await survivor.topup(account, toMicro(1000));
    for (let i = 0; i < o.replicas; i++) replicas.push(startReplica(o, account));
    const acked = () => replicas.reduce((a, r) => a + r.lines.length, 0);
    const failed = () => replicas.find((r) => r.lines.at(-1)?.startsWith('EXIT'));
    const check = (n: number) => () => {
      const f = failed();
      if (f) throw new Error(`a replica stopped by itself: ${f.lines.at(-1)}`);
      return acked() >= n;
    };
    await pollUntil(`${o.killAfterAcks} acknowledged operations`, check(o.killAfterAcks), timeoutMs);
    replicas[0]!.proc.kill('SIGKILL');
    await pollUntil(`${2 * o.killAfterAcks} acknowledged operations`, check(2 * o.killAfterAcks), timeoutMs);
    for (const r of replicas.slice(1)) r.proc.kill('SIGKILL');
    await Promise.all(replicas.map((r) => r.exited));
    const killedAt = Date.now();
    await pollUntil('the dead replicas’ holds to be released', async () => (await survivor.openHolds()).length === 0, timeoutMs).catch(
      () => {},
    );
    const releaseMs = Date.now() - killedAt;

    const entries = (
      await pool.query<{ type: string; hold_id: string | null; amount_micro: number; what: string | null; reason: string | null }>(
        'SELECT type, hold_id, amount_micro, what, reason FROM ledger.entries WHERE account_id = $1',
        [account],
      )
    ).rows;
    const byHold = new Map(entries.filter((e) => e.hold_id).map((e) => [e.hold_id!, e]));
    const topups = new Map(entries.filter((e) => e.type === 'topup').map((e) => [e.what, e]));
    const details: string[] = [];
    const lines = replicas.flatMap((r) => r.lines);
    for (const line of lines) {
      const [, op, id, amount] = line.split(' ');
      const e = op === 'topup' ? topups.get(id!) : byHold.get(id!);
      const ok =
        op === 'topup'
          ? e?.amount_micro === Number(amount)
          : op === 'hold'
            ? e !== undefined
            : op === 'settle'
              ? e?.type === 'settlement' && e.amount_micro === Number(amount)
              : e?.type === 'refund';
      if (!ok) details.push(`lost: ${line}`);
    }
    const doubleResolved = (
      await pool.query('SELECT hold_id FROM ledger.entries WHERE hold_id IS NOT NULL GROUP BY hold_id HAVING count(*) > 1')
    ).rowCount!;
    const expected = entries.reduce((b, e) => b + (e.type === 'topup' ? e.amount_micro : e.type === 'settlement' ? -e.amount_micro : 0), 0);
    const bal = await survivor.balance(account);
    const negative = (await pool.query('SELECT 1 FROM ledger.entries WHERE balance_after < 0')).rowCount! > 0 || bal.availableMicro < 0;
    const balanceMismatch = bal.balanceMicro !== expected || bal.heldMicro !== 0;
    if (balanceMismatch) details.push(`balance ${bal.balanceMicro} held ${bal.heldMicro}, entries say ${expected}`);
    return {
      acked: lines.length,
      lost: details.filter((d) => d.startsWith('lost')).length,
      openHoldsAfter: (await survivor.openHolds()).length,
      releasedByLease: entries.filter((e) => e.reason === 'lease_expired').length,
      releaseMs,
      doubleResolved,
      balanceMismatch,
      negative,
      details,
    };
  } finally {
    for (const r of replicas) r.proc.kill('SIGKILL');
    await pool.end();
    await survivor.close();
  }
}
