// `npm run bench -- pipeline --incremental --posts N`: what a scheduled run costs once a generation
// is published (docs/operations.md, "Incremental runs"), against a full rebuild of the same data,
// in one bench run on the pipeline bench's corpus (text, media off):
//   1. a full run on the corpus as of AS_OF (a fresh data dir, a child process);
//   2. an hour of new data lands: 1% new posts (published in the hour after AS_OF, their text that
//      of random corpus posts: stories continue), 1% re-observations (later counts of random
//      posts), 0.1% deletions; the incremental run as of AS_OF + 1 h, timed, peak RSS;
//   3. `--full` on the same data as of the same instant, timed, peak RSS;
//   4. agreement of the two generations: mean top-100 overlap of 400 queries (the ranking bench's,
//      the window turning, plus frequent words), and NMI between their narrative assignments of
//      the same posts, per window;
//   5. with --load (default): a server (npm run serve's flags) over the full generation, loaded by
//      autocannon (POST /search, limit 100); search p99 idle, then while another hour's incremental
//      run executes, then while a full run executes; the server's RSS peak (VmHWM, reset before
//      each) while it swaps to the incremental generation and to the full one.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import autocannon from 'autocannon';
import { openDuckDB, sqlString } from '../../core/infra/duckdb.ts';
import { generationDir, readCurrent, readManifest } from '../../core/snapshots/generations.ts';
import { dataDirLayout } from '../../core/infra/data-dir.ts';
import { search } from '../../core/ranking/search.ts';
import { loadSearchIndex, type SearchIndex } from '../../core/ranking/search-index.ts';
import { seededRandom } from '../../core/stats/seeded-random.ts';
import { nmi } from '../../core/stats/cluster-metrics.ts';
import { WINDOW_KEYS, type WindowKey } from '../../core/snapshots/windows.ts';
import { machine, writeResultsJson, writeResultsSection, thousands } from '../results-file.ts';
import { rssMiB, startServer, summary } from './api.ts';
import { AS_OF, child, corpus, freshDataDir } from './pipeline.ts';
import { queriesFrom, windowOf } from './ranking.ts';
import { searchLoad } from '../lib/search-load.ts';

interface IncrementalBenchOptions {
  posts: number;
  seed: number;
  command: string;
  load: boolean;
  connections: number;
}

const HOUR = 3_600_000;
const ROOT = path.resolve(import.meta.dirname, '..', '..');

interface Post {
  uuid: string;
  title?: string | null;
  [k: string]: unknown;
}

/** Every post record of the corpus files with text (first record of each uuid; some are the corpus's bad records, quarantined again). */
export async function corpusPosts(dir: string): Promise<Post[]> {
  const out: Post[] = [];
  const seen = new Set<string>();
  for (const f of fs
    .readdirSync(dir)
    .filter((x) => x.endsWith('.ndjson'))
    .sort()) {
    const rl = readline.createInterface({ input: fs.createReadStream(path.join(dir, f)), crlfDelay: Infinity });
    for await (const line of rl) {
      try {
        const r = JSON.parse(line) as Post;
        if (typeof r.uuid !== 'string' || seen.has(r.uuid) || typeof r.published_at !== 'string') continue;
        if (typeof r.title !== 'string' && typeof r.description !== 'string') continue;
        seen.add(r.uuid);
        out.push(r);
      } catch {
        // the corpus's planted bad records
      }
    }
  }
  return out;
}

/** An hour of new data after `from`: 1% new posts, 1% re-observations, 0.1% deletions of `live` posts. */
export function hourOfData(
  posts: Post[],
  live: Set<string>,
  from: number,
  tag: string,
  seed: number,
): { records: unknown[]; deleted: string[] } {
  const rand = seededRandom(seed);
  const pick = () => posts[Math.floor(rand() * posts.length)]!;
  const n = posts.length;
  const records: unknown[] = [];
  for (let i = 0; i < Math.round(n * 0.01); i++) {
    const p = pick();
    const t = from + Math.floor(rand() * HOUR) + 1;
    records.push({ ...p, uuid: `${tag}-${i}`, published_at: new Date(t).toISOString(), observed_at: new Date(t + 300_000).toISOString() });
  }
  const alive = posts.filter((p) => live.has(p.uuid));
  const chosen = new Set<string>();
  while (chosen.size < Math.round(n * 0.011) && chosen.size < alive.length) chosen.add(alive[Math.floor(rand() * alive.length)]!.uuid);
  const list = [...chosen];
  const byUuid = new Map(alive.map((p) => [p.uuid, p]));
  for (const u of list.slice(0, Math.round(n * 0.01))) {
    const p = byUuid.get(u)!;
    records.push({
      ...p,
      like_count: Number(p.like_count ?? 0) + 1 + Math.floor(rand() * 500),
      observed_at: new Date(from + HOUR).toISOString(),
    });
  }
  const deleted = list.slice(Math.round(n * 0.01));
  for (const u of deleted) records.push({ uuid: u, deleted: true });
  return { records, deleted };
}

export function writeNdjson(file: string, records: unknown[]): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const fd = fs.openSync(file, 'w');
  try {
    for (let i = 0; i < records.length; i += 10_000)
      fs.writeSync(
        fd,
        records
          .slice(i, i + 10_000)
          .map((r) => JSON.stringify(r))
          .join('\n') + '\n',
      );
  } finally {
    fs.closeSync(fd);
  }
}

/** The run-stages child, asynchronously (the load runs beside it). */
function runAsync(args: string[]): Promise<Record<string, any>> {
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'bench', 'run-stages.ts'), ...args], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    p.stdout.on('data', (d) => (out += d));
    p.stderr.on('data', (d) => (err += d));
    p.on('exit', (code) =>
      code === 0 ? resolve(JSON.parse(out.trim().split('\n').pop()!)) : reject(new Error(`run-stages failed: ${err.slice(-2000)}`)),
    );
  });
}

async function liveUuids(dataDir: string): Promise<Set<string>> {
  const layout = dataDirLayout(dataDir);
  const dir = generationDir(layout, (await readCurrent(layout))!);
  const db = await openDuckDB();
  try {
    return new Set(
      (await db.all<{ uuid: string }>(`SELECT uuid FROM read_parquet(${sqlString(path.join(dir, 'posts.parquet'))})`)).map((r) => r.uuid),
    );
  } finally {
    db.close();
  }
}

async function narrativeAssignment(dir: string): Promise<Map<string, Map<string, string>>> {
  const db = await openDuckDB();
  try {
    const rows = await db.all<{ w: string; uuid: string; id: string }>(
      `SELECT window_key AS w, uuid, narrative_id AS id FROM read_parquet(${sqlString(path.join(dir, 'narrative-members.parquet'))})`,
    );
    const out = new Map<string, Map<string, string>>(WINDOW_KEYS.map((w) => [w, new Map()]));
    for (const r of rows) out.get(r.w)!.set(r.uuid, r.id);
    return out;
  } finally {
    db.close();
  }
}

/** Agreement of two generations of the same posts: top-100 overlap of the queries; narrative NMI per window. */
async function agreement(incDir: string, fullDir: string, queries: Array<{ text: string; window: WindowKey }>) {
  const a: SearchIndex = await loadSearchIndex(incDir, { enrichment: false });
  const b: SearchIndex = await loadSearchIndex(fullDir, { enrichment: false });
  let sum = 0;
  for (const q of queries) {
    const x = search(a, { query: q.text, limit: 100, window: q.window }).map((r) => r.uuid);
    const y = new Set(search(b, { query: q.text, limit: 100, window: q.window }).map((r) => r.uuid));
    const denom = Math.max(x.length, y.size);
    sum += denom === 0 ? 1 : x.filter((u) => y.has(u)).length / denom;
  }
  const na = await narrativeAssignment(incDir);
  const nb = await narrativeAssignment(fullDir);
  const nmiByWindow = Object.fromEntries(
    WINDOW_KEYS.map((w) => {
      // The window's posts: those of the full generation published in it.
      const start = b.windowStart[w];
      const us: string[] = [];
      for (let r = start; r < b.rows; r++) if (!b.deleted[r]) us.push(b.uuid.get(r)!);
      return [
        w,
        nmi(
          us.map((u) => na.get(w)!.get(u) ?? 'noise'),
          us.map((u) => nb.get(w)!.get(u) ?? 'noise'),
        ),
      ];
    }),
  ) as Record<WindowKey, number>;
  return { meanTop100Overlap: sum / queries.length, queries: queries.length, nmi: nmiByWindow };
}

/** Reset the process's peak RSS (Linux: clear_refs 5), so VmHWM then measures what follows. */
function resetPeak(pid: number): boolean {
  try {
    fs.writeFileSync(`/proc/${pid}/clear_refs`, '5');
    return true;
  } catch {
    return false;
  }
}

async function waitForGeneration(baseUrl: string, key: string, gen: string, pid: number, rss: { max: number }): Promise<number> {
  const t0 = Date.now();
  for (;;) {
    rss.max = Math.max(rss.max, rssMiB(pid).rss);
    const h = (await (await fetch(`${baseUrl}/health`, { headers: { 'x-api-key': key } })).json()) as { generation?: string };
    if (h.generation === gen) return Date.now() - t0;
    if (Date.now() - t0 > 900_000) throw new Error(`the server did not swap to ${gen} within 15 minutes`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

export async function benchPipelineIncremental(o: IncrementalBenchOptions): Promise<void> {
  const c = await corpus({ posts: o.posts, seed: o.seed, format: 'ndjson', media: 'off', stages: [], runs: 1, command: '' });
  const posts = await corpusPosts(c.dir);
  const d = freshDataDir(c.dir);
  const layout = dataDirLayout(d);
  const t1 = new Date(Date.parse(AS_OF) + HOUR).toISOString();
  const t2 = new Date(Date.parse(AS_OF) + 2 * HOUR).toISOString();
  const t3 = new Date(Date.parse(AS_OF) + 3 * HOUR).toISOString();
  try {
    process.stderr.write(`full run on ${posts.length} posts ...\n`);
    const initial = child('run-stages.ts', [d, AS_OF, 'run']);
    const hour1 = hourOfData(posts, await liveUuids(d), Date.parse(AS_OF), 'hour1', o.seed + 1);
    writeNdjson(path.join(d, 'landing', 'increments', 'hour-1.ndjson'), hour1.records);
    process.stderr.write(`incremental run (${hour1.records.length} records) ...\n`);
    const inc = child('run-stages.ts', [d, t1, 'run']);
    const incGen = (await readCurrent(layout))!;
    process.stderr.write(`full run on the same data ...\n`);
    const full = child('run-stages.ts', [d, t1, '--full', 'run']);
    const fullGen = (await readCurrent(layout))!;
    const incManifest = await readManifest(layout, incGen);
    const fullManifest = await readManifest(layout, fullGen);
    const truth = `${c.dir}.truth.ndjson`;
    // The ranking bench's 400 queries (narrative keywords, the window turning) and frequent words.
    const queries = [
      ...queriesFrom(truth, 360).map((q, i) => ({ text: q.text, window: windowOf(i) })),
      ...['news', 'today', 'new', 'great', 'update', 'love', 'video', 'watch', 'best', 'time'].flatMap((text, i) =>
        WINDOW_KEYS.map((window) => ({ text: i % 2 ? `${text} #news` : text, window })),
      ),
    ];
    process.stderr.write(`agreement of ${incGen} and ${fullGen} ...\n`);
    const agree = await agreement(generationDir(layout, incGen), generationDir(layout, fullGen), queries);

    let load: Record<string, unknown> | null = null;
    if (o.load) load = await underLoad(d, posts, o, queries, [t2, t3]);

    const result = {
      date: new Date().toISOString(),
      machine: machine(),
      command: o.command,
      posts: o.posts,
      increment: {
        records: hour1.records.length,
        newPosts: Math.round(o.posts * 0.01),
        reobservations: Math.round(o.posts * 0.01),
        deletions: hour1.deleted.length,
      },
      initial: { ms: initial.ms, stageMs: initial.stageMs, maxRssMiB: initial.maxRssMiB },
      incremental: { ms: inc.ms, stageMs: inc.stageMs, maxRssMiB: inc.maxRssMiB, summaries: inc.summaries, run: incManifest.run },
      full: { ms: full.ms, stageMs: full.stageMs, maxRssMiB: full.maxRssMiB, run: fullManifest.run },
      ratio: inc.ms / full.ms,
      agreement: agree,
      load,
    };
    writeResultsJson(`pipeline-incremental-${o.posts}`, result);
    const f = thousands;
    const sec = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
    const stages = (s: Record<string, number>) =>
      Object.entries(s)
        .map(([k, v]) => `${k} ${sec(v)}`)
        .join(', ');
    const minNmi = Math.min(...Object.values(agree.nmi));
    const l = load as null | Record<string, any>;
    const md = `## Pipeline: incremental run at ${f(o.posts)} posts

Command: \`${o.command}\` — ${result.date.slice(0, 10)}, ${result.machine}. The pipeline bench's corpus (ndjson, media off), a full run as of ${AS_OF}; then an hour of data lands (${f(result.increment.newPosts)} new posts, ${f(result.increment.reobservations)} re-observations, ${f(result.increment.deletions)} deletions); the incremental run as of +1 h, then \`--full\` on the same data as of the same instant, each in its own process, nothing else running.

| | incremental | full rebuild | bar |
|---|---|---|---|
| run time | **${sec(inc.ms)}** | ${sec(full.ms)} | incremental under 5% of full (${result.ratio < 0.05 ? 'met' : 'missed'}: ${(result.ratio * 100).toFixed(1)}%) and under 60 s (${inc.ms < 60_000 ? 'met' : 'missed'}) |
| peak RSS (whole process) | ${f(inc.maxRssMiB)} MiB | ${f(full.maxRssMiB)} MiB | |
| stages | ${stages(inc.stageMs)} | ${stages(full.stageMs)} | |
| segments | built ${incManifest.run?.built.join(', ')}, reused ${incManifest.run?.reused.length} | built ${fullManifest.run?.built.length} | |

Agreement of the two generations: mean top-100 overlap of ${agree.queries} queries **${agree.meanTop100Overlap.toFixed(3)}** (bar >= 0.9: ${agree.meanTop100Overlap >= 0.9 ? 'met' : 'missed'}); narrative NMI of the same posts ${WINDOW_KEYS.map((w) => `${w} ${agree.nmi[w].toFixed(3)}`).join(', ')} (bar >= 0.9: ${minNmi >= 0.9 ? 'met' : 'missed'} at the lowest).

Inside the incremental run: features ${JSON.stringify(pick(inc.summaries.features, ['computed', 'segments', 'planMs', 'textMs', 'embedMs', 'themesMs', 'segmentWriteMs']))}; index ${JSON.stringify(pick(inc.summaries.index, ['built', 'reused', 'bm25Ms', 'hnswMs', 'neighbourMs']))}; narratives ${sec(inc.stageMs.narratives ?? 0)} (load ${sec(Number(inc.summaries.narratives?.loadMs ?? 0))}); the initial full run: ${sec(initial.ms)} (${stages(initial.stageMs)}), peak RSS ${f(initial.maxRssMiB)} MiB.
${
  l
    ? `
Beside a loaded server (\`npm run serve\`'s flags, over the full generation; autocannon, ${o.connections} connections, POST /search limit 100, the same queries), each run on a further hour of data:

| | search p99 | search p50 | req/s | run time |
|---|---|---|---|---|
| no run | **${l.idle.p99} ms** | ${l.idle.p50} ms | ${f(l.idle.reqPerSec)} | |
| while an incremental run executes | **${l.incremental.p99} ms** | ${l.incremental.p50} ms | ${f(l.incremental.reqPerSec)} | ${sec(l.incrementalMs)} |
| while a full run executes | **${l.full.p99} ms** | ${l.full.p50} ms | ${f(l.full.reqPerSec)} | ${sec(l.fullMs)} |

Server RSS before / peak during the swap (VmHWM reset just before it): to the incremental generation ${f(l.swapIncremental.before)} / **${f(l.swapIncremental.peak)} MiB** (bar under 3.5 GiB: ${l.swapIncremental.peak < 3584 ? 'met' : 'missed'}; the swap took ${sec(l.swapIncremental.ms)}); to the full generation (nothing shared: two generations held at once, as every swap did before segments) ${f(l.swapFull.before)} / **${f(l.swapFull.peak)} MiB** (${sec(l.swapFull.ms)}).`
    : ''
}`;
    writeResultsSection(`pipeline-incremental-${o.posts}`, md);
    process.stdout.write(md + '\n');
  } finally {
    fs.rmSync(d, { recursive: true, force: true });
  }
}

function pick(o: Record<string, unknown> | undefined, keys: string[]): Record<string, unknown> {
  return Object.fromEntries(keys.filter((k) => o?.[k] !== undefined).map((k) => [k, o![k]]));
}

/** Search p99 with no run, during an incremental and during a full run; the server's RSS during each swap. */
async function underLoad(
  d: string,
  posts: Post[],
  o: IncrementalBenchOptions,
  queries: Array<{ text: string; window: WindowKey }>,
  at: [string, string],
) {
  const layout = dataDirLayout(d);
  // The server checks CURRENT every second, so it swaps as soon as a run publishes.
  const server = await startServer(d, undefined, { SNAPSHOT_CHECK_MS: '1000' });
  const pid = server.proc.pid!;
  const opts = searchLoad(server, o.connections, (i) => {
    const q = queries[i % queries.length]!;
    return { query: q.text, limit: 100, window: q.window };
  });
  /** Load for as long as `work` runs. */
  const during = async (work: Promise<Record<string, any>>) => {
    let finish: (r: autocannon.Result) => void = () => undefined;
    const done = new Promise<autocannon.Result>((resolve) => (finish = resolve));
    const inst = autocannon(opts(24 * 3600), (_e, res) => finish(res));
    const r = await work.finally(() => inst.stop());
    return { run: r, load: await done };
  };
  try {
    await new Promise<autocannon.Result>((resolve) => autocannon(opts(3), (_e, r) => resolve(r)));
    const idle = await new Promise<autocannon.Result>((resolve) => autocannon(opts(20), (_e, r) => resolve(r)));

    const hour2 = hourOfData(posts, await liveUuids(d), Date.parse(at[0]) - HOUR, 'hour2', o.seed + 2);
    writeNdjson(path.join(d, 'landing', 'increments', 'hour-2.ndjson'), hour2.records);
    const inc = await during(runAsync([d, at[0], 'run']));
    const incGen = (await readCurrent(layout))!;
    const swapIncremental = { before: rssMiB(pid).rss, peak: 0, ms: 0, reset: resetPeak(pid) };
    const sampled = { max: 0 };
    swapIncremental.ms = await waitForGeneration(server.baseUrl, server.key, incGen, pid, sampled);
    swapIncremental.peak = swapIncremental.reset ? rssMiB(pid).peak : sampled.max;

    const hour3 = hourOfData(posts, await liveUuids(d), Date.parse(at[1]) - HOUR, 'hour3', o.seed + 3);
    writeNdjson(path.join(d, 'landing', 'increments', 'hour-3.ndjson'), hour3.records);
    const full = await during(runAsync([d, at[1], '--full', 'run']));
    const fullGen = (await readCurrent(layout))!;
    const swapFull = { before: rssMiB(pid).rss, peak: 0, ms: 0, reset: resetPeak(pid) };
    const sampledFull = { max: 0 };
    swapFull.ms = await waitForGeneration(server.baseUrl, server.key, fullGen, pid, sampledFull);
    swapFull.peak = swapFull.reset ? rssMiB(pid).peak : sampledFull.max;
    return {
      idle: summary(idle),
      incremental: summary(inc.load),
      incrementalMs: inc.run.ms,
      full: summary(full.load),
      fullMs: full.run.ms,
      swapIncremental,
      swapFull,
    };
  } finally {
    server.proc.kill('SIGKILL');
  }
}
