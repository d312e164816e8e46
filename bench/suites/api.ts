// `npm run bench -- api`: the HTTP server as a client sees it, at N posts. The generation is the
// full pipeline's on the pipeline bench's corpus (text + precomputed visual vectors), built once
// and kept under bench/.cache/api-N. The server runs as its own process (npm run serve) with a
// fresh ledger; autocannon drives it from this process, on the same 2 cores:
//   POST /search (limit 100, the ranking bench's queries, the window turning), closed loop with C
//   connections: req/s, p50/p99; then the free map reads, mixed: p99;
//   server RSS sampled from /proc during the runs (and its peak, VmHWM);
//   durability: the server is killed with SIGKILL right after the runs, the ledger recovered, and
//   its settlements counted: every 200 the clients saw must be there.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import autocannon from 'autocannon';
import { WINDOW_KEYS } from '../../core/windows.ts';
import { Ledger } from '../../ledger/ledger.ts';
import { machine, writeResultsJson, writeResultsSection } from '../results-file.ts';
import { corpus, runStagesFresh } from './pipeline.ts';
import { queriesFrom, windowOf } from './ranking.ts';
import { machineSpeed } from '../lib/machine-speed.ts';
import { hasCurrentLayout } from '../lib/cached-generation.ts';
import { searchLoad } from '../lib/search-load.ts';

export interface ApiBenchOptions {
  posts: number;
  seconds: number;
  connections: number;
  command: string;
  searchThreads?: number;
  runs: number;
}

const ROOT = path.resolve(import.meta.dirname, '..', '..');

export async function ensureData(posts: number): Promise<{ dir: string; truth: string; built: Record<string, any> | null }> {
  const dir = path.join(ROOT, 'bench', '.cache', `api-${posts}`);
  const c = await corpus({ posts, seed: 42, format: 'ndjson', media: 'vectors', stages: [], runs: 1, command: '' });
  let built: Record<string, any> | null = null;
  if (!hasCurrentLayout(dir)) {
    process.stderr.write(`building the generation of ${posts} posts into ${dir} (the whole pipeline) ...\n`);
    const r = runStagesFresh(c.dir, ['run'], dir);
    built = { ...r, builtAt: new Date().toISOString() };
    fs.writeFileSync(path.join(dir, 'build.json'), JSON.stringify(built));
  } else if (fs.existsSync(path.join(dir, 'build.json'))) {
    built = { ...JSON.parse(fs.readFileSync(path.join(dir, 'build.json'), 'utf8')), cached: true };
  }
  return { dir, truth: `${c.dir}.truth.ndjson`, built };
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
  });
}

export function rssMiB(pid: number): { rss: number; peak: number } {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (k: string) => Number(new RegExp(`${k}:\\s+(\\d+)`).exec(status)?.[1] ?? 0);
  return { rss: kb('VmRSS') / 1024, peak: kb('VmHWM') / 1024 };
}

/** Node's flags in package.json's `serve` script (`node <flags> serve/main.ts`). */
function serveScriptFlags(): string[] {
  const script = (JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts
    .serve!;
  const m = /^node\s+(.*?)\s*serve\/main\.ts$/.exec(script);
  if (!m) throw new Error(`the serve script is not "node <flags> serve/main.ts": ${script}`);
  return m[1]!.split(/\s+/).filter(Boolean);
}

export interface Server {
  proc: ChildProcess;
  baseUrl: string;
  key: string;
  account: string;
  startMs: number;
}

export async function startServer(dataDir: string, searchThreads?: number, env: Record<string, string> = {}): Promise<Server> {
  // A fresh ledger (the bench's own account, not the last run's) and no jobs (no cache hits from the last run's).
  fs.rmSync(path.join(dataDir, 'ledger'), { recursive: true, force: true });
  fs.rmSync(path.join(dataDir, 'jobs'), { recursive: true, force: true });
  fs.rmSync(path.join(dataDir, 'demo-key.json'), { force: true });
  const port = await freePort();
  const log = fs.openSync(path.join(dataDir, 'bench-server.log'), 'w');
  const t0 = performance.now();
  // The flags of `npm run serve` (package.json), so the bench measures the server as it is run.
  const proc = spawn(process.execPath, [...serveScriptFlags(), path.join(ROOT, 'serve', 'main.ts')], {
    cwd: ROOT,
    stdio: ['ignore', log, log],
    env: {
      ...process.env,
      DATA_DIR: dataDir,
      PORT: String(port),
      HOST: '127.0.0.1',
      DEMO_CREDITS: '100000000',
      RATE_LIMIT_RPS: '1000000',
      RATE_LIMIT_BURST: '1000000',
      SNAPSHOT_CHECK_MS: '3600000',
      LOG_LEVEL: 'info',
      ...(searchThreads === undefined ? {} : { SEARCH_THREADS: String(searchThreads) }),
      ...env,
    },
  });
  fs.closeSync(log);
  const baseUrl = `http://127.0.0.1:${port}/api`;
  const keyFile = path.join(dataDir, 'demo-key.json');
  // Loading a 1M-post generation takes a while: poll, bounded at 10 minutes.
  for (const until = Date.now() + 600_000; ;) {
    if (proc.exitCode !== null) throw new Error(`server exited (${proc.exitCode}); see ${path.join(dataDir, 'bench-server.log')}`);
    if (Date.now() > until) throw new Error('server did not become ready within 10 minutes');
    if (fs.existsSync(keyFile)) {
      const { secret, account } = JSON.parse(fs.readFileSync(keyFile, 'utf8')) as { secret: string; account: string };
      const ok = await fetch(`${baseUrl}/health`, { headers: { 'x-api-key': secret } }).then(
        (r) => r.ok,
        () => false,
      );
      if (ok) return { proc, baseUrl, key: secret, account, startMs: performance.now() - t0 };
    }
    await new Promise((r) => setTimeout(r, 250));
  }
}

export async function load(opts: autocannon.Options, pid: number, rss: { max: number }): Promise<autocannon.Result> {
  const timer = setInterval(() => (rss.max = Math.max(rss.max, rssMiB(pid).rss)), 500);
  try {
    return await autocannon(opts);
  } finally {
    clearInterval(timer);
  }
}

export function summary(r: autocannon.Result) {
  return {
    reqPerSec: r.requests.average,
    p50: r.latency.p50,
    p90: r.latency.p90,
    p99: r.latency.p99,
    max: r.latency.max,
    ok: r['2xx'],
    non2xx: r.non2xx,
    errors: r.errors,
    timeouts: r.timeouts,
    total: r.requests.total,
  };
}

export async function benchApi(o: ApiBenchOptions): Promise<void> {
  const { dir, truth, built } = await ensureData(o.posts);
  const queries = queriesFrom(truth, 400);
  // The machine's own speed, idle, before and after: this VM's speed drifts within an hour.
  const speedBefore = machineSpeed();
  const server = await startServer(dir, o.searchThreads);
  const pid = server.proc.pid!;
  const rss = { max: rssMiB(pid).rss };
  const idleRss = rssMiB(pid).rss;
  const headers = { 'x-api-key': server.key, 'content-type': 'application/json' };
  const searchOpts = searchLoad(server, o.connections, (i) => ({
    query: queries[i % queries.length]!.text,
    limit: 100,
    window: windowOf(i % queries.length),
  }));
  try {
    const warm = await load(searchOpts(3), pid, rss);
    // Runs on one machine vary by 10-15%: the median run (by req/s) is reported, with every run's figures in the JSON.
    const searchRuns: autocannon.Result[] = [];
    for (let r = 0; r < o.runs; r++) searchRuns.push(await load(searchOpts(o.seconds), pid, rss));
    const search = [...searchRuns].sort((a, b) => a.requests.average - b.requests.average)[Math.floor(searchRuns.length / 2)]!;
    // Map reads: every free read endpoint, mixed, ids taken from the maps themselves.
    const get = async (p: string) => (await fetch(`${server.baseUrl}${p}`, { headers })).json() as Promise<any>;
    const paths: string[] = ['/health'];
    for (const w of WINDOW_KEYS) {
      const trending = await get(`/narratives/trending?window=${w}&limit=20`);
      paths.push(`/narratives/trending?window=${w}&limit=20`);
      for (const item of (trending.items ?? trending.narratives ?? []).slice(0, 3))
        paths.push(`/narratives/${item.id}`, `/narratives/${item.id}/trajectory`);
      const patterns = await get(`/intelligence/patterns?scope=${w}&limit=20`);
      paths.push(`/intelligence/patterns?scope=${w}&limit=20`);
      for (const p of (patterns.items ?? []).slice(0, 2))
        paths.push(
          `/intelligence/patterns/${p.patternKey}`,
          `/intelligence/patterns/${p.patternKey}/content`,
          `/intelligence/patterns/${p.patternKey}/lookalikes`,
        );
    }
    for (const q of queries.slice(0, 8)) paths.push(`/narratives/search?q=${encodeURIComponent(q.text)}&window=all`);
    paths.push('/usage?limit=50');
    const reads = await load(
      {
        url: server.baseUrl,
        connections: o.connections,
        duration: Math.max(5, Math.round(o.seconds / 2)),
        requests: paths.map((p) => ({ method: 'GET' as const, path: `/api${p}`, headers })),
      },
      pid,
      rss,
    );
    const peak = rssMiB(pid).peak;
    // Durability: SIGKILL, no goodbye; every 200 must have its settlement on disk.
    server.proc.kill('SIGKILL');
    await new Promise((r) => server.proc.once('exit', r));
    const ledger = await Ledger.open({ dir: path.join(dir, 'ledger') });
    let settlements = 0;
    let charged = 0;
    for (let cursor: string | null = null; ;) {
      const page: ReturnType<Ledger['usage']> = ledger.usage(server.account, { cursor, limit: 500 });
      for (const e of page.entries) if (e.type === 'settlement') (settlements++, (charged += e.credits));
      if (!page.nextCursor) break;
      cursor = page.nextCursor;
    }
    const openHolds = ledger.openHolds().length;
    await ledger.close();
    const searchOk = warm['2xx'] + searchRuns.reduce((a, r) => a + r['2xx'], 0);
    const speedAfter = machineSpeed();
    const result = {
      date: new Date().toISOString(),
      machine: machine(),
      command: o.command,
      posts: o.posts,
      connections: o.connections,
      seconds: o.seconds,
      searchThreads: o.searchThreads ?? 'default (1)',
      serverStartMs: server.startMs,
      search: summary(search),
      searchRuns: searchRuns.map(summary),
      warmup: summary(warm),
      reads: { ...summary(reads), endpoints: paths.length },
      rssMiB: { idle: idleRss, maxSampled: rss.max, peak },
      machineSpeed: { before: speedBefore, after: speedAfter },
      durability: { searchOk, settlements, chargedCredits: charged, openHoldsAfterRecovery: openHolds },
      build: built ? { ms: built.ms, stageMs: built.stageMs, maxRssMiB: built.maxRssMiB, cached: Boolean(built.cached) } : null,
    };
    const suite = `api-${o.posts}${o.searchThreads === undefined ? '' : `-threads${o.searchThreads}`}`;
    writeResultsJson(suite, result);
    const f = (x: number) => Math.round(x).toLocaleString('en-US');
    const ms = (x: number) => `${x.toFixed(1)} ms`;
    const s = result.search;
    const md = `## HTTP API at ${f(o.posts)} posts${o.searchThreads === undefined ? '' : `, SEARCH_THREADS=${o.searchThreads}`}

Command: \`${o.command}\` — ${result.date.slice(0, 10)}, ${result.machine}. The server (\`npm run serve\`, its own process, access log on) over the full pipeline's generation of the pipeline bench's corpus (text + precomputed visual vectors), a fresh ledger; autocannon in the bench process on the same 2 cores, ${o.connections} connections, closed loop. POST /search: limit 100, ${queries.length} queries of the ranking bench, the window turning; ${o.runs} run(s) of ${o.seconds} s after a 3 s warm-up, the median run (by req/s) shown (every run: ${searchRuns.map((r) => Math.round(r.requests.average)).join(', ')} req/s).

| | value | bar |
|---|---|---|
| POST /search throughput | **${f(s.reqPerSec)} req/s** | >= 200 (${s.reqPerSec >= 200 ? 'met' : 'missed'}) |
| POST /search latency p50 / p90 / p99 | ${ms(s.p50)} / ${ms(s.p90)} / **${ms(s.p99)}** | p99 under 100 ms (${s.p99 < 100 ? 'met' : 'missed'}) |
| POST /search answers in that run (2xx / other / errors) | ${f(s.ok)} / ${f(s.non2xx)} / ${f(s.errors + s.timeouts)} | |
| map reads (${paths.length} endpoints mixed) p50 / p99 | ${ms(result.reads.p50)} / **${ms(result.reads.p99)}** | p99 under 20 ms (${result.reads.p99 < 20 ? 'met' : 'missed'}) |
| map reads throughput | ${f(result.reads.reqPerSec)} req/s | |
| server RSS: after load / max sampled under load / peak (VmHWM) | ${f(idleRss)} / ${f(rss.max)} / **${f(peak)} MiB** | under 3 GiB (${peak < 3072 ? 'met' : 'missed'}) |
| server start to first answer (load the generation) | ${(server.startMs / 1000).toFixed(1)} s | |
| durability: search 200s seen (all runs) / settlements after SIGKILL and recovery | ${f(searchOk)} / ${f(settlements)} (${settlements >= searchOk ? 'every charge on disk' : 'CHARGES MISSING'}) | every charge durable |
| machine speed probe, idle, before / after (bench/lib/machine-speed.ts): random memory access; multiply-add in cache | ${speedBefore.memoryNsPerAccess.toFixed(0)} / ${speedAfter.memoryNsPerAccess.toFixed(0)} ns; ${speedBefore.computeNsPerMultiplyAdd.toFixed(2)} / ${speedAfter.computeNsPerMultiplyAdd.toFixed(2)} ns | (compare runs on these) |
${
  built
    ? `\nThe generation was built ${built.cached ? 'by an earlier run of this suite and kept' : 'by this run'} (the whole pipeline, in a child process): ${(built.ms / 1000).toFixed(1)} s; ${Object.entries(
        built.stageMs as Record<string, number>,
      )
        .map(([k, v]) => `${k} ${(v / 1000).toFixed(1)} s`)
        .join(', ')}.`
    : ''
}`;
    writeResultsSection(suite, md);
    process.stdout.write(md + '\n');
  } finally {
    if (server.proc.exitCode === null) server.proc.kill('SIGKILL');
  }
}
