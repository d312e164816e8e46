// The ledger's crash check, run by its tests and by the crash soak of `npm run bench -- ledger`.
// One trial: a real child process (load-child.ts) loads the ledger and is killed with SIGKILL once
// it has acknowledged `killAfterAcks` operations; the ledger is reopened and checked against what
// the child acknowledged and against an independent decode of the log files:
// every acknowledged operation present, no hold left open, balance = top-ups - settlements.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { scanFrame } from '../log/frame.ts';
import { FileLedgerStore } from '../file-ledger-store.ts';
import { decodeRecord, type LedgerRecord } from '../log/records.ts';
import { toMicro } from '../money.ts';

const ROOT = path.resolve(import.meta.dirname, '..', '..');

interface TrialResult {
  acked: number;
  lost: number;
  openHoldsAfter: number;
  balanceMismatch: boolean;
  releasedAtRecovery: number;
  tornTail: boolean;
  recoveryMs: number;
  details: string[];
}

/** Every record in the ledger's log files, decoded without the ledger's own code paths. */
function decodeLog(dir: string): LedgerRecord[] {
  const out: LedgerRecord[] = [];
  for (const f of fs
    .readdirSync(dir)
    .filter((n) => /^seg-\d+\.log$/.test(n))
    .sort()) {
    const buf = fs.readFileSync(path.join(dir, f));
    for (let o = 0; ;) {
      const fr = scanFrame(buf, o);
      if (fr.kind !== 'record') break;
      out.push(decodeRecord(fr.payload));
      o = fr.next;
    }
  }
  return out;
}

export async function crashTrial(opts: { killAfterAcks: number; concurrency: number; timeoutMs?: number }): Promise<TrialResult> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ledger-crash-'));
  try {
    const setup = await FileLedgerStore.open({ dir });
    const account = (await setup.createAccount('load')).id;
    await setup.topup(account, toMicro(1000));
    await setup.close();

    const child = spawn(
      process.execPath,
      ['--import', 'tsx', path.join(import.meta.dirname, 'load-child.ts'), dir, account, String(opts.concurrency)],
      {
        cwd: ROOT,
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let text = '';
    let acks = 0;
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    const exited = new Promise<void>((res) => child.on('close', () => res()));
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`load child made no progress: ${stderr.slice(-500)}`)), opts.timeoutMs ?? 60_000);
      child.stdout.on('data', (d: Buffer) => {
        text += d.toString('utf8');
        acks = (text.match(/\nACK /g) ?? []).length;
        if (acks >= opts.killAfterAcks) {
          clearTimeout(timer);
          child.kill('SIGKILL');
          resolve();
        }
      });
      child.on('close', () => {
        clearTimeout(timer);
        reject(new Error(`load child exited early: ${stderr.slice(-500)}`));
      });
    });
    await exited;

    const lines = text.split('\n').filter((l) => l.startsWith('ACK '));
    const l = await FileLedgerStore.open({ dir });
    const records = decodeLog(dir);
    const holds = new Set(records.filter((r) => r.t === 'hold').map((r) => (r as { id: string }).id));
    const settles = new Map(
      records.filter((r) => r.t === 'settle').map((r) => [(r as { hold: string }).hold, (r as { amountMicro: number }).amountMicro]),
    );
    const releases = new Set(records.filter((r) => r.t === 'release').map((r) => (r as { hold: string }).hold));
    const topups = new Set(records.filter((r) => r.t === 'topup').map((r) => (r as { note: string | null }).note));
    const details: string[] = [];
    for (const line of lines) {
      const [, kind, id, amount] = line.split(' ');
      const present =
        kind === 'hold'
          ? holds.has(id!)
          : kind === 'settle'
            ? settles.get(id!) === Number(amount)
            : kind === 'release'
              ? releases.has(id!)
              : kind === 'topup'
                ? topups.has(id!)
                : false;
      if (!present) details.push(`lost: ${line}`);
    }
    const expected = records.reduce((b, r) => b + (r.t === 'topup' ? r.amountMicro : r.t === 'settle' ? -r.amountMicro : 0), 0);
    const balance = await l.balance(account);
    const result: TrialResult = {
      acked: lines.length,
      lost: details.length,
      openHoldsAfter: (await l.openHolds()).length,
      balanceMismatch: balance.balanceMicro !== expected || balance.heldMicro !== 0,
      releasedAtRecovery: l.recovery.releasedHolds,
      tornTail: l.recovery.tornTail !== null,
      recoveryMs: l.recovery.ms,
      details,
    };
    if (result.balanceMismatch) details.push(`balance ${balance.balanceMicro} held ${balance.heldMicro}, replay says ${expected}`);
    await l.close();
    return result;
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
