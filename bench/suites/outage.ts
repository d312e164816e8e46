// `npm run bench -- outage [--trials T] [--seconds S]`: a PostgreSQL outage under billed load
// (issue "A PostgreSQL outage ... ride it out"; docs/scaling.md, "A database outage"). T trials of
// each kind, SIGKILL of the postmaster and a fast shutdown, each S seconds long, on two replica
// processes over the committed sample's generation (tools/outage-trial.ts). The bars: both
// replicas alive, every Idempotency-Key answered within 30 s of recovery, 0 holds open 30 s after
// it, free reads 200 through the outage, balances exact, every acknowledged charge once.
import fs from 'node:fs';
import path from 'node:path';
import { outageTrial, type OutageTrialResult } from '../../tools/outage-trial.ts';
import { median, runStamp, thousands, writeResultsJson, writeResultsSection } from '../results-file.ts';
import { sampleGeneration } from './replicas.ts';

interface OutageBenchOptions {
  trials: number;
  seconds: number;
  command: string;
}

const BOUND_MS = 30_000;

function row(how: string, list: readonly OutageTrialResult[]): string {
  const f = thousands;
  const sum = (g: (r: OutageTrialResult) => number) => list.reduce((s, r) => s + g(r), 0);
  const billed: Record<string, number> = {};
  for (const r of list) for (const [k, n] of Object.entries(r.billedDuringOutage)) billed[k] = (billed[k] ?? 0) + n;
  const during = Object.entries(billed)
    .sort()
    .map(([k, n]) => `${k}: ${f(n)}`)
    .join(', ');
  return `| ${how} | ${list.length} | ${list.filter((r) => r.replicasAlive).length}/${list.length} | ${f(median(list.map((r) => r.outageMs)))} | ${f(sum((r) => r.keys))} (${f(sum((r) => r.keysHitByOutage))} met the outage) | **${sum((r) => r.unanswered)}** | ${f(Math.max(...list.map((r) => r.slowestAfterRecoveryMs)))} | **${sum((r) => r.openHoldsAfterBound)}** (closed ${f(Math.max(...list.map((r) => r.holdsClosedMs)))} ms after) | ${f(sum((r) => r.freeReadsDuringOutage))} / **${sum((r) => r.freeReadsFailed)}** | ${during} | ${sum((r) => r.lost)} / ${sum((r) => r.chargedTwice)} / ${list.filter((r) => r.balanceMismatch || r.negative).length} | ${sum((r) => r.unhandled)} |`;
}

export async function benchOutage(o: OutageBenchOptions): Promise<void> {
  const template = sampleGeneration();
  const work = fs.mkdtempSync(path.join(path.dirname(template), 'outage-work-'));
  const trials: Record<'kill' | 'fast', OutageTrialResult[]> = { kill: [], fast: [] };
  try {
    for (let t = 0; t < o.trials; t++)
      for (const how of ['kill', 'fast'] as const) {
        const r = await outageTrial({ template, workDir: work, how, outageMs: o.seconds * 1000, boundMs: BOUND_MS });
        trials[how].push(r);
        process.stdout.write(`${how} ${t + 1}/${o.trials}: ${JSON.stringify(r)}\n`);
      }
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
  const stamp = runStamp(o.command);
  writeResultsJson('outage', { ...stamp, seconds: o.seconds, boundMs: BOUND_MS, trials });
  const md = `## PostgreSQL outage under billed load

Command: \`${o.command}\` — ${stamp.date.slice(0, 10)}, ${stamp.machine}.

Each trial (tools/outage-trial.ts): two replica processes (serve/main.ts) started together on a fresh database of their own embedded PostgreSQL, over the committed sample's generation; four clients on each sending billed searches, each with its own Idempotency-Key (every ninth request a records job), a search not answered 200 retried with the same key every 300 ms until it is; free reads (trending, a narrative, /health) and /readyz polled on both every 100 ms. After 40 searches were answered PostgreSQL is taken away (\`kill\`: SIGKILL of the postmaster; \`fast\`: the fast shutdown \`pg_ctl stop -m fast\` sends) for ${o.seconds} s, started again on the same data; new keys stop 2 s later. Bars: both replicas alive, every key answered within ${BOUND_MS / 1000} s of recovery, 0 holds open ${BOUND_MS / 1000} s after it, free reads 200 through the outage, every acknowledged charge once, balances exact. Lease 5 s, job expiry 5 s.

| outage | trials | replicas alive | outage ms (median) | keys | keys unanswered ${BOUND_MS / 1000} s after recovery | slowest key after recovery, ms | holds open ${BOUND_MS / 1000} s after recovery | free reads during outage / not 200 | billed calls during the outage, by status | lost / charged twice / balance wrong | unhandled rejections caught |
|---|---|---|---|---|---|---|---|---|---|---|---|
${row('SIGKILL', trials.kill)}
${row('fast shutdown', trials.fast)}
`;
  writeResultsSection('outage', md);
  process.stdout.write(md + '\n');
}
