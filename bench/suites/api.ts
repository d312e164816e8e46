// `npm run bench -- api`: the HTTP server as a client sees it, at N posts. The generation is the
// full pipeline's on the pipeline bench's corpus (text + precomputed visual vectors), built once
// and kept under bench/.cache/api-N. The server runs as its own process (npm run serve) with a
// fresh ledger; autocannon drives it from this process, on the same 2 cores:
//   POST /search (limit 100) with each query mix of bench/lib/query-mixes.ts (planted, frequent
//   words and tags, long natural-language queries, Zipf-repeated), closed loop at each connection
//   count: req/s, p50/p99, and the server's CPU per search split by thread (main, search workers,
//   the rest) from /proc; beside it in the same run, the bare-HTTP ceiling (bench/lib/
//   bare-http-server.ts answering a body of the median answer's size) so each figure reads as a
//   share of what this machine carries over HTTP; then the free map reads, mixed: p99;
//   server RSS sampled from /proc during the runs (and its peak, VmHWM);
//   durability: the server is killed with SIGKILL right after the runs, the ledger recovered, and
//   its settlements counted: every 200 the clients saw must be there.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import autocannon from 'autocannon';
import { DEMO_KEY_FILES } from '../../serve/billing/demo-account.ts';
import { WINDOW_KEYS } from '../../core/snapshots/windows.ts';
import { FileLedgerStore } from '../../ledger/file-ledger-store.ts';
import { runStamp, writeResultsJson, writeResultsSection } from '../results-file.ts';
import { corpus, runStagesFresh } from './pipeline.ts';
import { machineSpeed } from '../lib/machine-speed.ts';
import { hasCurrentLayout } from '../lib/cached-generation.ts';
import { searchLoad } from '../lib/search-load.ts';
import { buildQueryMixes, MIX_NAMES, type BenchQuery, type MixName, type QueryMixes } from '../lib/query-mixes.ts';
import { cpuBetween, threadCpuMs, type CpuSplit } from '../lib/thread-cpu.ts';
import { search } from '../../core/ranking/search.ts';
import { loadSearchIndex } from '../../core/ranking/search-index.ts';
import { generationDir, readCurrent } from '../../core/snapshots/generations.ts';
import { dataDirLayout } from '../../core/infra/data-dir.ts';

interface ApiBenchOptions {
  posts: number;
  seconds: number;
  /** Connection counts, each run with every mix. */
  connections: number[];
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

/** `fresh`: a new ledger, jobs and demo key first (false for a second replica over the first one's). */
export async function startServer(
  dataDir: string,
  searchThreads?: number,
  env: Record<string, string> = {},
  fresh = true,
): Promise<Server> {
  // A fresh ledger (the bench's own account, not the last run's) and no jobs (no cache hits from the last run's).
  if (fresh) {
    fs.rmSync(path.join(dataDir, 'ledger'), { recursive: true, force: true });
    fs.rmSync(path.join(dataDir, 'jobs'), { recursive: true, force: true });
    for (const f of Object.values(DEMO_KEY_FILES)) fs.rmSync(path.join(dataDir, f), { force: true });
  }
  const port = await freePort();
  const log = fs.openSync(path.join(dataDir, fresh ? 'bench-server.log' : `bench-server-${port}.log`), 'w');
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
  // Each ledger keeps its own demo key (serve/billing/demo-account.ts).
  const keyFile = path.join(dataDir, DEMO_KEY_FILES[{ ...process.env, ...env }.DATABASE_URL ? 'postgres' : 'file']);
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

/**
 * The server's thread ids, from its 'threads' log line (serve/server.ts). A server that does not
 * log them (an earlier version, run for an A/B) has its main thread's id equal to its pid on Linux;
 * its workers then count as "other".
 */
function serverThreads(dataDir: string, pid: number): { main: number; workers: number[] } {
  for (const line of fs.readFileSync(path.join(dataDir, 'bench-server.log'), 'utf8').split('\n')) {
    if (!line.includes('"msg":"threads"')) continue;
    const o = JSON.parse(line) as { mainThread: number | null; searchThreads: number[] };
    if (o.mainThread !== null) return { main: o.mainThread, workers: o.searchThreads };
  }
  return { main: pid, workers: [] };
}

/** Bytes of the answers to the first `n` queries of each mix (sent one at a time). */
async function answerBytes(server: Server, queries: readonly BenchQuery[]): Promise<number[]> {
  const out: number[] = [];
  for (const q of queries) {
    const r = await fetch(`${server.baseUrl}/search`, {
      method: 'POST',
      headers: { 'x-api-key': server.key, 'content-type': 'application/json' },
      body: JSON.stringify({ query: q.query, limit: 100, window: q.window }),
    });
    const body = await r.arrayBuffer();
    if (r.status !== 200) throw new Error(`POST /search ${JSON.stringify(q)} answered ${r.status}: ${Buffer.from(body).toString()}`);
    out.push(body.byteLength);
  }
  return out;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)]!;

/** The bare-HTTP ceiling server (bench/lib/bare-http-server.ts) as its own process. */
async function startBare(bytes: number): Promise<{ proc: ChildProcess; url: string }> {
  const port = await freePort();
  const proc = spawn(
    process.execPath,
    ['--import', 'tsx', path.join(ROOT, 'bench', 'lib', 'bare-http-server.ts'), String(port), String(bytes)],
    {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  await new Promise<void>((resolve, reject) => {
    proc.once('exit', (code) => reject(new Error(`bare-http-server exited (${code})`)));
    proc.stdout!.once('data', () => resolve());
  });
  return { proc, url: `http://127.0.0.1:${port}` };
}

interface LoadFigures {
  reqPerSec: number;
  p50: number;
  p99: number;
  ok: number;
  non2xx: number;
  errors: number;
  /** req/s of every run (the median run is reported). */
  runs: number[];
}

function medianRun(results: autocannon.Result[]): { median: autocannon.Result; index: number } {
  const order = results.map((r, i) => [r.requests.average, i] as const).sort((a, b) => a[0] - b[0]);
  const index = order[Math.floor((order.length - 1) / 2)]![1];
  return { median: results[index]!, index };
}

function figures(results: autocannon.Result[]): LoadFigures {
  const { median: m } = medianRun(results);
  return {
    reqPerSec: m.requests.average,
    p50: m.latency.p50,
    p99: m.latency.p99,
    ok: m['2xx'],
    non2xx: m.non2xx,
    errors: m.errors + m.timeouts,
    runs: results.map((r) => Math.round(r.requests.average)),
  };
}

interface MixFigures extends LoadFigures {
  mix: MixName;
  connections: number;
  /** The answer cache (SEARCH_CACHE_MB) off, or on at its default. */
  cache: 'on' | 'off';
  /** 2xx answers over every run (the durability count). */
  okAllRuns: number;
  /** Server CPU per answered search in the median run, ms, by thread. */
  cpuPerSearch: CpuSplit;
}

/** How many of each mix's queries the runs so far sent. */
const sentOf = new WeakMap<readonly BenchQuery[], number>();

/** One mix at one connection count: o.runs closed-loop runs, the median run's figures and its CPU per search by thread. */
async function runMix(
  server: Server,
  threads: { main: number; workers: number[] },
  queries: readonly BenchQuery[],
  connections: number,
  o: ApiBenchOptions,
  rss: { max: number },
  what: Pick<MixFigures, 'mix' | 'connections' | 'cache'>,
): Promise<MixFigures> {
  const pid = server.proc.pid!;
  // Each mix goes on where its last runs stopped (the long mix's queries are each sent once).
  const from = sentOf.get(queries) ?? 0;
  let sent = 0;
  const opts = searchLoad(server, connections, (i) => {
    const q = queries[(from + i) % queries.length]!;
    sent = i + 1;
    return { query: q.query, limit: 100, window: q.window };
  });
  const runs: autocannon.Result[] = [];
  const cpu: CpuSplit[] = [];
  let ok = 0;
  for (let r = 0; r < o.runs; r++) {
    const before = threadCpuMs(pid);
    const res = await load(opts(o.seconds), pid, rss);
    cpu.push(cpuBetween(before, threadCpuMs(pid), threads.main, threads.workers));
    runs.push(res);
    ok += res['2xx'];
  }
  sentOf.set(queries, from + sent);
  const { median: m, index } = medianRun(runs);
  const n = Math.max(1, m['2xx']);
  const c = cpu[index]!;
  process.stderr.write(
    `${what.mix} (cache ${what.cache}) at ${connections} connections: ${Math.round(m.requests.average)} req/s, p99 ${m.latency.p99} ms, CPU ${(c.totalMs / n).toFixed(1)} ms a search\n`,
  );
  return {
    ...what,
    ...figures(runs),
    okAllRuns: ok,
    cpuPerSearch: { totalMs: c.totalMs / n, mainMs: c.mainMs / n, workersMs: c.workersMs / n, otherMs: c.otherMs / n },
  };
}

type Mixes = QueryMixes['mixes'];
type RequestHeaders = Record<string, string>;

/** Answer sizes (for the ceiling's body) of every mix's first queries, each mix warmed up by them. */
async function answerSizes(server: Server, mixes: Mixes): Promise<{ ok: number; sizes: Record<string, number>; answerMedian: number }> {
  const sizes: Record<string, number> = {};
  const sampled: number[] = [];
  let ok = 0;
  for (const m of MIX_NAMES) {
    const b = await answerBytes(server, mixes[m].slice(0, 40));
    ok += b.length;
    sizes[m] = median(b);
    sampled.push(...b);
  }
  return { ok, sizes, answerMedian: median(sampled) };
}

/** Map reads: every free read endpoint, mixed, ids taken from the maps themselves. */
async function readPaths(server: Server, headers: RequestHeaders, mixes: Mixes): Promise<string[]> {
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
  for (const q of mixes.planted.slice(0, 8)) paths.push(`/narratives/search?q=${encodeURIComponent(q.query)}&window=all`);
  paths.push('/usage?limit=50');
  return paths;
}

/** Durability: SIGKILL, no goodbye; then the settlements and open holds the recovered file ledger holds. */
async function killAndRecover(server: Server, dir: string): Promise<{ settlements: number; charged: number; openHolds: number }> {
  server.proc.kill('SIGKILL');
  await new Promise((r) => server.proc.once('exit', r));
  const ledger = await FileLedgerStore.open({ dir: path.join(dir, 'ledger') });
  let settlements = 0;
  let charged = 0;
  for (let cursor: string | null = null; ;) {
    const page: Awaited<ReturnType<FileLedgerStore['usage']>> = await ledger.usage(server.account, { cursor, limit: 500 });
    for (const e of page.entries) if (e.type === 'settlement') (settlements++, (charged += e.credits));
    if (!page.nextCursor) break;
    cursor = page.nextCursor;
  }
  const openHolds = (await ledger.openHolds()).length;
  await ledger.close();
  return { settlements, charged, openHolds };
}

type CacheStats = { hits: number; misses: number; entries: number; bytes: number };

/** The repeated mix again with the answer cache on (the default SEARCH_CACHE_MB): a server of its own. */
async function cachedRuns(
  dir: string,
  o: ApiBenchOptions,
  repeated: readonly BenchQuery[],
  rss: { max: number },
): Promise<{ results: MixFigures[]; cacheStats: CacheStats | null }> {
  const results: MixFigures[] = [];
  const cached = await startServer(dir, o.searchThreads);
  try {
    const cachedThreads = serverThreads(dir, cached.proc.pid!);
    await answerBytes(cached, repeated.slice(0, 40));
    for (const connections of o.connections)
      results.push(await runMix(cached, cachedThreads, repeated, connections, o, rss, { mix: 'repeated', connections, cache: 'on' }));
    const health = (await (await fetch(`${cached.baseUrl}/health`, { headers: { 'x-api-key': cached.key } })).json()) as {
      search?: { answer_cache?: CacheStats };
    };
    return { results, cacheStats: health.search?.answer_cache ?? null };
  } finally {
    cached.proc.kill('SIGKILL');
    await new Promise((r) => cached.proc.once('exit', r));
  }
}

/** The bare-HTTP ceiling, with the server gone: same client, connections, runs and a body of the median answer's size. */
async function bareCeiling(answerMedian: number, o: ApiBenchOptions, headers: RequestHeaders): Promise<Record<number, LoadFigures>> {
  const bare = await startBare(answerMedian);
  const ceiling: Record<number, LoadFigures> = {};
  try {
    for (const connections of o.connections) {
      const runs: autocannon.Result[] = [];
      for (let r = 0; r < o.runs; r++)
        runs.push(
          await autocannon({
            url: bare.url,
            connections,
            duration: o.seconds,
            requests: [{ method: 'POST', path: '/api/search', headers, body: JSON.stringify({ query: 'ceiling', limit: 100 }) }],
          }),
        );
      ceiling[connections] = figures(runs);
    }
  } finally {
    bare.proc.kill('SIGKILL');
  }
  return ceiling;
}

export async function benchApi(o: ApiBenchOptions): Promise<void> {
  const { dir, truth, built } = await ensureData(o.posts);
  const corpusDir = truth.replace(/\.truth\.ndjson$/, '');
  const { mixes, topTags, topWords } = buildQueryMixes(corpusDir, truth);
  // The machine's own speed, idle, before and after: this VM's speed drifts within an hour.
  const speedBefore = machineSpeed();
  const server = await startServer(dir, o.searchThreads, { SEARCH_CACHE_MB: '0' });
  const pid = server.proc.pid!;
  const threads = serverThreads(dir, pid);
  const rss = { max: rssMiB(pid).rss };
  const headers = { 'x-api-key': server.key, 'content-type': 'application/json' };
  const bodyOf = (mix: readonly BenchQuery[]) => (i: number) => {
    const q = mix[i % mix.length]!;
    return { query: q.query, limit: 100, window: q.window };
  };
  try {
    // Answer sizes and a warm-up of every mix.
    const { ok, sizes, answerMedian } = await answerSizes(server, mixes);
    let searchOk = ok;
    const warm = await load(searchLoad(server, Math.max(...o.connections), bodyOf(mixes.planted))(3), pid, rss);
    searchOk += warm['2xx'];
    const idleRss = rssMiB(pid).rss;

    // Runs on one machine vary by 10-15%: the median run (by req/s) is reported, every run's req/s kept.
    // Every mix runs with the answer cache off (SEARCH_CACHE_MB=0): a mix cycles through a few
    // hundred queries, which a cache would answer from memory after the first pass.
    const results: MixFigures[] = [];
    for (const connections of o.connections)
      for (const mix of MIX_NAMES) {
        const figs = await runMix(server, threads, mixes[mix], connections, o, rss, { mix, connections, cache: 'off' });
        searchOk += figs.okAllRuns;
        results.push(figs);
      }
    const paths = await readPaths(server, headers, mixes);
    const reads = await load(
      {
        url: server.baseUrl,
        connections: Math.max(...o.connections),
        duration: Math.max(5, Math.round(o.seconds / 2)),
        requests: paths.map((p) => ({ method: 'GET' as const, path: `/api${p}`, headers })),
      },
      pid,
      rss,
    );
    const peak = rssMiB(pid).peak;
    const overlap = await answerOverlap(server, dir, mixes);
    searchOk += overlap.answers;
    const { settlements, charged, openHolds } = await killAndRecover(server, dir);
    const cached = await cachedRuns(dir, o, mixes.repeated, rss);
    results.push(...cached.results);
    const ceiling = await bareCeiling(answerMedian, o, headers);
    const speedAfter = machineSpeed();
    const result = {
      ...runStamp(o.command),
      posts: o.posts,
      connections: o.connections,
      seconds: o.seconds,
      runs: o.runs,
      searchThreads: o.searchThreads ?? 'server default (the cores)',
      serverStartMs: server.startMs,
      threads,
      mixes: results,
      queryMixes: { topTags: topTags.slice(0, 10), topWords, sizes: Object.fromEntries(MIX_NAMES.map((m) => [m, mixes[m].length])) },
      answerBytes: { median: answerMedian, byMix: sizes },
      answerCache: cached.cacheStats,
      ceiling,
      reads: { ...summary(reads), endpoints: paths.length },
      overlap: overlap.byMix,
      rssMiB: { idle: idleRss, maxSampled: rss.max, peak },
      machineSpeed: { before: speedBefore, after: speedAfter },
      durability: { searchOk, settlements, chargedCredits: charged, openHoldsAfterRecovery: openHolds },
      build: built ? { ms: built.ms, stageMs: built.stageMs, maxRssMiB: built.maxRssMiB, cached: Boolean(built.cached) } : null,
    };
    const suite = `api-${o.posts}${o.searchThreads === undefined ? '' : `-threads${o.searchThreads}`}`;
    writeResultsJson(suite, result);
    writeResultsSection(suite, apiMarkdown(o, result));
    process.stdout.write(apiMarkdown(o, result) + '\n');
  } finally {
    if (server.proc.exitCode === null) server.proc.kill('SIGKILL');
  }
}

/** Queries of each mix whose served answer is compared with the exact one. */
const OVERLAP_QUERIES = 100;

/**
 * For the first queries of each mix: the share of the exact answer's rows (core/ranking/search.ts,
 * search's reference) that the server's answer returns, mean per mix. The generation is loaded
 * here without its graphs (the exact answer reads none).
 */
async function answerOverlap(
  server: Server,
  dir: string,
  mixes: QueryMixes['mixes'],
): Promise<{ byMix: Record<MixName, number>; answers: number }> {
  const layout = dataDirLayout(dir);
  const index = await loadSearchIndex(generationDir(layout, (await readCurrent(layout))!), { graphs: false, enrichment: false });
  const byMix = {} as Record<MixName, number>;
  let answers = 0;
  for (const mix of MIX_NAMES) {
    let sum = 0;
    const queries = mixes[mix].slice(0, OVERLAP_QUERIES);
    for (const q of queries) {
      const body = { query: q.query, limit: 100, window: q.window };
      const res = await fetch(`${server.baseUrl}/search`, {
        method: 'POST',
        headers: { 'x-api-key': server.key, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      if (res.status !== 200) throw new Error(`POST /search ${JSON.stringify(body)}: ${res.status} ${await res.text()}`);
      answers++;
      const served = new Set(((await res.json()) as { content: Array<{ uuid: string }> }).content.map((c) => c.uuid));
      const exact = search(index, body, { reference: true });
      sum += exact.length === 0 ? (served.size === 0 ? 1 : 0) : exact.filter((r) => served.has(r.uuid)).length / exact.length;
    }
    byMix[mix] = sum / queries.length;
  }
  return { byMix, answers };
}

const MIX_TEXT: Record<MixName, string> = {
  planted: "planted: the planted narratives' keywords and hashtags",
  frequent: 'frequent: the most frequent tags alone, pairs of the most frequent words, tag + word',
  long: 'long: 8-20 words of real posts, each query sent once (20,000 distinct; the answer caches see rows they have not held before, as with real traffic)',
  repeated: 'repeated: Zipf (s = 1) over 200 queries of the other mixes',
};

function apiMarkdown(o: ApiBenchOptions, r: any): string {
  const f = (x: number) => Math.round(x).toLocaleString('en-US');
  const ms = (x: number) => `${x.toFixed(1)} ms`;
  const most = Math.max(...o.connections);
  const at1M = o.posts >= 1_000_000;
  const bar = (ok: boolean) => (ok ? 'met' : 'missed');
  const rows = (r.mixes as MixFigures[]).map((m) => {
    const c = r.ceiling[m.connections] as LoadFigures;
    const bars: string[] = [];
    if (m.connections === most && at1M && m.cache === 'off') {
      // Issue 48's bars: 400 req/s for every mix but the long queries (150), p99 under 100 ms, 5 ms of CPU a search.
      const least = m.mix === 'long' ? 150 : 400;
      bars.push(`>= ${least} req/s, p99 < 100 ms (${bar(m.reqPerSec >= least && m.p99 < 100)})`);
      bars.push(`CPU <= 5 ms (${bar(m.cpuPerSearch.totalMs <= 5)})`);
    }
    const cpu = m.cpuPerSearch;
    return `| ${m.mix} | ${m.cache} | ${m.connections} | **${f(m.reqPerSec)}** (${m.runs.join(', ')}) | ${((100 * m.reqPerSec) / c.reqPerSec).toFixed(1)}% | ${ms(m.p50)} / **${ms(m.p99)}** | **${cpu.totalMs.toFixed(2)}** = ${cpu.mainMs.toFixed(2)} + ${cpu.workersMs.toFixed(2)} + ${cpu.otherMs.toFixed(2)} | ${m.non2xx + m.errors} | ${bars.join('; ')} |`;
  });
  const b = r.build;
  return `## HTTP API at ${f(o.posts)} posts${o.searchThreads === undefined ? '' : `, SEARCH_THREADS=${o.searchThreads}`}

Command: \`${o.command}\` — ${r.date.slice(0, 10)}, ${r.machine}. The server (\`npm run serve\`, its own process, access log on) over the full pipeline's generation of the pipeline bench's corpus (text + precomputed visual vectors), a fresh ledger; autocannon in the bench process on the same 2 cores, closed loop. POST /search, limit 100, with each query mix (bench/lib/query-mixes.ts; every query with its window, the four windows turning): ${MIX_NAMES.map((m) => MIX_TEXT[m]).join('; ')}. The most frequent tags: ${r.queryMixes.topTags
    .slice(0, 6)
    .map((t: string) => `#${t}`)
    .join(
      ', ',
    )}; words: ${r.queryMixes.topWords.slice(0, 8).join(', ')}. ${o.runs} run(s) of ${o.seconds} s per mix and connection count after a 3 s warm-up; the median run (by req/s) shown, every run's req/s in brackets. Answer cache: every mix runs on a server with it off (SEARCH_CACHE_MB=0: each mix cycles through a few hundred queries, which the cache would serve from memory after the first pass); the repeated mix runs again on a server with it on (the default 64 MiB), where real traffic's repeats are what it is for${r.answerCache ? ` (that server's /health after the runs: ${f(r.answerCache.hits)} hits, ${f(r.answerCache.misses)} misses, ${f(r.answerCache.entries)} answers held in ${(r.answerCache.bytes / 1048576).toFixed(1)} MiB)` : ''}. Search threads: ${r.searchThreads}: ${r.threads.workers.length - 1} answer worker(s) and the graph worker (serve/search/search-pool.ts). CPU per search: the server's CPU time in that run (/proc, per thread) over its answered searches: main thread + search workers + other threads (V8's GC helpers, libuv, DuckDB). The ceiling: a bare node:http server (bench/lib/bare-http-server.ts) answering a fixed ${f(r.answerBytes.median)}-byte body (the median answer's size; by mix ${MIX_NAMES.map((m) => `${m} ${f(r.answerBytes.byMix[m])}`).join(', ')}), same client, connections and runs, in the same run: ${o.connections.map((c) => `**${f(r.ceiling[c].reqPerSec)} req/s** at ${c} connections (p99 ${ms(r.ceiling[c].p99)})`).join(', ')}.${at1M ? '' : ' The bars are for 1M posts and are not judged here.'}

| mix | answer cache | connections | req/s (runs) | of the ceiling | p50 / p99 | CPU per search, ms: all = main + workers + other | non-2xx + errors | bars (1M posts, ${most} connections) |
|---|---|---|---|---|---|---|---|---|
${rows.join('\n')}

| | value | bar |
|---|---|---|
| top-100 overlap with the exact answer (the first ${OVERLAP_QUERIES} queries of each mix, served over HTTP; the exact answer computed in this process: every posting scored, an exact vector scan) | ${MIX_NAMES.map((m) => `${m} ${r.overlap[m].toFixed(4)}`).join(', ')} | at least 0.98 (${MIX_NAMES.every((m) => r.overlap[m] >= 0.98) ? 'met' : 'missed'}) |
| map reads (${r.reads.endpoints} endpoints mixed, ${most} connections) p50 / p99 | ${ms(r.reads.p50)} / **${ms(r.reads.p99)}** | p99 under 20 ms (${r.reads.p99 < 20 ? 'met' : 'missed'}) |
| map reads throughput | ${f(r.reads.reqPerSec)} req/s | |
| server RSS: after warm-up / max sampled under load / peak (VmHWM) | ${f(r.rssMiB.idle)} / ${f(r.rssMiB.maxSampled)} / **${f(r.rssMiB.peak)} MiB** | under 3 GiB (${r.rssMiB.peak < 3072 ? 'met' : 'missed'}) |
| server start to first answer (load the generation) | ${(r.serverStartMs / 1000).toFixed(1)} s | |
| durability: search 200s seen (all runs) / settlements after SIGKILL and recovery | ${f(r.durability.searchOk)} / ${f(r.durability.settlements)} (${r.durability.settlements >= r.durability.searchOk ? 'every charge on disk' : 'CHARGES MISSING'}) | every charge durable |
| machine speed probe, idle, before / after (bench/lib/machine-speed.ts): random memory access; multiply-add in cache | ${r.machineSpeed.before.memoryNsPerAccess.toFixed(0)} / ${r.machineSpeed.after.memoryNsPerAccess.toFixed(0)} ns; ${r.machineSpeed.before.computeNsPerMultiplyAdd.toFixed(2)} / ${r.machineSpeed.after.computeNsPerMultiplyAdd.toFixed(2)} ns | (compare runs on these) |
${
  b
    ? `\nThe generation was built ${b.cached ? 'by an earlier run of this suite and kept' : 'by this run'} (the whole pipeline, in a child process): ${(b.ms / 1000).toFixed(1)} s; ${Object.entries(
        b.stageMs as Record<string, number>,
      )
        .map(([k, v]) => `${k} ${(v / 1000).toFixed(1)} s`)
        .join(', ')}.`
    : ''
}`;
}
