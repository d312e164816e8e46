// `npm run bench -- ledger [--seconds S] [--runs R] [--recovery-entries N] [--crash-trials T]
// [--backend file|postgres]`: durable hold+settle pairs per second at concurrency 1, 16 and 256,
// group commit against an fdatasync-per-operation baseline in the same run; recovery time of N
// entries (full replay and from a checkpoint); and a crash soak of T SIGKILL trials under load.
// --backend postgres: suites/ledger-postgres.ts.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { FileLedgerStore } from '../../ledger/file-ledger-store.ts';
import { crashTrial } from '../../ledger/verify/crash-trial.ts';
import { median, runStamp, writeResultsJson, writeResultsSection, thousands } from '../results-file.ts';
import { toMicro } from '../../ledger/money.ts';

interface LedgerBenchOptions {
  seconds: number;
  runs: number;
  recoveryEntries: number;
  crashTrials: number;
  command: string;
}

/** The ledger's default checkpoint interval (records). */
const CHECKPOINT_INTERVAL = 100_000;

const ROOT = path.resolve(import.meta.dirname, '..', '..');
const tmp = () => fs.mkdtempSync(path.join(os.tmpdir(), 'bench-ledger-'));

/** Pairs completed per second by `concurrency` workers looping hold -> settle, in a fresh process. */
export function pairsPerSecond(concurrency: number, mode: 'group' | 'single' | 'postgres', seconds: number, databaseUrl?: string): number {
  const r = spawnSync(
    process.execPath,
    ['--import', 'tsx', path.join(ROOT, 'bench', 'ledger-throughput.ts'), String(concurrency), mode, String(seconds)],
    { encoding: 'utf8', env: databaseUrl ? { ...process.env, DATABASE_URL: databaseUrl } : process.env },
  );
  if (r.status !== 0) throw new Error(`ledger-throughput.ts failed: ${r.stderr.slice(-1000)}`);
  return (JSON.parse(r.stdout.trim().split('\n').pop()!) as { pairsPerSec: number }).pairsPerSec;
}

async function recovery(
  entries: number,
  runs: number,
): Promise<{ fullMs: number; checkpointMs: number; tailMs: number; tailRecords: number; records: number; bytes: number }> {
  const dir = tmp();
  try {
    // The worst case a crash can leave with the default interval (100k records): a checkpoint,
    // then a full interval of records after it, then no shutdown checkpoint.
    const l = await FileLedgerStore.open({ dir, checkpointEvery: 0 });
    const acc = (await l.createAccount('bench')).id;
    await l.topup(acc, toMicro(1_000_000));
    const fill = async (upTo: number) => {
      let written = l.lastSeq;
      await Promise.all(
        Array.from({ length: 512 }, async (_, w) => {
          for (let i = 0; written < upTo; i++) {
            written += 2;
            const h = await l.hold({ account: acc, amountMicro: toMicro(1), ref: `w${w}-${i}-${upTo}`, what: 'search' });
            if (h.ok) await l.settle(h.hold.id, toMicro(0.4));
          }
        }),
      );
    };
    await fill(Math.max(0, entries - CHECKPOINT_INTERVAL));
    await l.checkpoint();
    await fill(entries);
    const records = l.lastSeq;
    await l.close({ checkpoint: false });
    const bytes = fs
      .readdirSync(dir)
      .filter((f) => f.startsWith('seg-'))
      .reduce((a, f) => a + fs.statSync(path.join(dir, f)).size, 0);
    const openMs = async () => {
      const r = await FileLedgerStore.open({ dir, checkpointEvery: 0 });
      const ms = r.recovery.ms;
      return { r, ms };
    };
    const tail: number[] = [];
    let tailRecords = 0;
    for (let i = 0; i < runs; i++) {
      const { r, ms } = await openMs();
      if (!r.recovery.fromCheckpoint) throw new Error('expected an automatic checkpoint');
      tail.push(ms);
      tailRecords = r.recovery.replayed;
      await r.close({ checkpoint: false });
    }
    fs.rmSync(path.join(dir, 'checkpoint.json'));
    const full: number[] = [];
    for (let i = 0; i < runs; i++) {
      const { r, ms } = await openMs();
      full.push(ms);
      await r.close({ checkpoint: false });
    }
    const w = await FileLedgerStore.open({ dir });
    await w.close({ checkpoint: true });
    const cp: number[] = [];
    for (let i = 0; i < runs; i++) {
      const { r, ms } = await openMs();
      if (!r.recovery.fromCheckpoint) throw new Error('expected a checkpoint');
      cp.push(ms);
      await r.close({ checkpoint: false });
    }
    return { fullMs: median(full), checkpointMs: median(cp), tailMs: median(tail), tailRecords, records, bytes };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

export async function benchLedger(o: LedgerBenchOptions): Promise<void> {
  const throughput: Array<{ concurrency: number; groupCommit: number; baseline: number }> = [];
  for (const c of [1, 16, 256]) {
    const g: number[] = [];
    const b: number[] = [];
    for (let r = 0; r < o.runs; r++) {
      g.push(pairsPerSecond(c, 'group', o.seconds));
      b.push(pairsPerSecond(c, 'single', o.seconds));
    }
    throughput.push({ concurrency: c, groupCommit: median(g), baseline: median(b) });
    process.stderr.write(
      `concurrency ${c}: group commit ${Math.round(median(g))} pairs/s, fsync per op ${Math.round(median(b))} pairs/s\n`,
    );
  }
  const rec = o.recoveryEntries > 0 ? await recovery(o.recoveryEntries, o.runs) : null;
  if (rec)
    process.stderr.write(
      `recovery of ${rec.records} records: after a crash ${rec.tailMs.toFixed(0)} ms (${rec.tailRecords} replayed), clean ${rec.checkpointMs.toFixed(0)} ms, full ${rec.fullMs.toFixed(0)} ms\n`,
    );

  const soak = {
    trials: o.crashTrials,
    acked: 0,
    lost: 0,
    openHoldsAfter: 0,
    balanceMismatches: 0,
    tornTails: 0,
    releasedAtRecovery: 0,
    failures: [] as string[],
  };
  for (let t = 0; t < o.crashTrials; t++) {
    // Deterministic spread of kill points and concurrency across the trials.
    const concurrency = [1, 16, 256][t % 3]!;
    const killAfterAcks = 1 + ((t * 7919) % 3000);
    const r = await crashTrial({ killAfterAcks, concurrency });
    soak.acked += r.acked;
    soak.lost += r.lost;
    soak.openHoldsAfter += r.openHoldsAfter;
    soak.balanceMismatches += r.balanceMismatch ? 1 : 0;
    soak.tornTails += r.tornTail ? 1 : 0;
    soak.releasedAtRecovery += r.releasedAtRecovery;
    if (r.details.length) soak.failures.push(`trial ${t}: ${r.details.slice(0, 3).join('; ')}`);
    if ((t + 1) % 10 === 0)
      process.stderr.write(
        `crash trials ${t + 1}/${o.crashTrials}: lost ${soak.lost}, open holds ${soak.openHoldsAfter}, mismatches ${soak.balanceMismatches}\n`,
      );
  }

  const result = {
    ...runStamp(o.command),
    seconds: o.seconds,
    runs: o.runs,
    throughput,
    recovery: rec,
    crashSoak: soak,
  };
  writeResultsJson('ledger', result);
  const f = thousands;
  const rows = throughput
    .map((t) => `| ${t.concurrency} | ${f(t.groupCommit)} | ${f(t.baseline)} | ${(t.groupCommit / t.baseline).toFixed(1)}x |`)
    .join('\n');
  const md = `## Ledger: durable hold+settle pairs, recovery, crash soak

Command: \`${o.command}\` — ${result.date.slice(0, 10)}, ${result.machine}; medians of ${o.runs} runs of ${o.seconds} s each, every run in a fresh process. Every pair is two records (hold, settle), each acknowledged only after the fdatasync covering it.

| concurrency | group commit (pairs/s) | fdatasync per operation (pairs/s) | ratio |
|---|---|---|---|
${rows}
${
  rec
    ? `
Recovery of ${f(rec.records)} records (${(rec.bytes / 2 ** 20).toFixed(0)} MiB of log files), every record's checksum verified each time, median of ${o.runs} opens:
as a crash leaves it (last automatic checkpoint, then ${f(rec.tailRecords)} records replayed) **${f(rec.tailMs)} ms**; from a checkpoint at the end (clean shutdown) ${f(rec.checkpointMs)} ms; full replay with no checkpoint ${f(rec.fullMs)} ms.
`
    : ''
}${
    o.crashTrials > 0
      ? `
Crash soak: ${soak.trials} SIGKILL trials of a real process under load (concurrency 1/16/256, kill after 1..3,000 acknowledged operations): ${f(soak.acked)} operations acknowledged, **${soak.lost} lost**, **${soak.openHoldsAfter} holds left open**, **${soak.balanceMismatches} balance mismatches**; ${soak.tornTails} trials found a torn tail and cut it; ${f(soak.releasedAtRecovery)} holds in flight at the kill were refunded at recovery.
`
      : ''
  }`;
  writeResultsSection('ledger', md);
  process.stdout.write(md + '\n');
}
