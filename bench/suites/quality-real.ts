// Narratives on real crises (part of `npm run bench -- quality`, --part real; issue 38): two sets of
// real tweets at their real times (fixtures/crisislex.ts), CrisisLexT6 (6 crises, 60,078 tweets,
// half of them the everyday talk of the same places and days) and the T26 set (11 crises of
// CrisisLexT26 with 15,000 everyday TweetEval tweets mixed in), each
//   1. in a full run on a fresh data dir as of just after its last tweet;
//   2. arriving in time order, whole hours at a time, through incremental runs (a first full run on
//      the first arrival), the last one as of the same instant;
// and the final generation of both scored per window (bench/lib/story-figures.ts): narratives and
// themes, each crisis's best narrative and theme F1, purity against the crisis and against crisis x
// information type, off-topic tweets inside narratives, catch-alls, trending's top 10. Beside them,
// on the full run's posts: TF-IDF + k-means and NMF at the true number of crises (scikit-learn),
// and HDBSCAN on the post vectors the pipeline embedded (bench/peers/density_peer.py).
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { loadConfig } from '../../core/infra/config.ts';
import { dataDirLayout } from '../../core/infra/data-dir.ts';
import { openDuckDB, sqlString } from '../../core/infra/duckdb.ts';
import { generationDir, readCurrent, readManifest } from '../../core/snapshots/generations.ts';
import { createLogger } from '../../core/infra/log.ts';
import { scoreStories, type PostTruth, type StoryScore } from '../../core/stats/story-metrics.ts';
import {
  everydayTexts,
  hourlyArrivals,
  mixEveryday,
  readT26,
  readT6,
  tweetPost,
  HOUR_MS,
  type LabelledTweet,
} from '../../fixtures/crisislex.ts';
import { resolveStages, runStages } from '../../pipeline/runner.ts';
import { textVectors } from '../lib/generation-vectors.ts';
import { runDensityPeer } from '../lib/density-peer.ts';
import { generationFigures, type GenerationFigures, type WindowFigures } from '../lib/story-figures.ts';
import { runTopicPeers } from '../lib/topic-peers.ts';
import { writeNdjson } from './pipeline-incremental.ts';

const ROOT = path.resolve(import.meta.dirname, '..', '..');
export const REAL_SETS = ['t6', 't26'] as const;
export type RealSet = (typeof REAL_SETS)[number];
const EVERYDAY = 15_000;
/** HDBSCAN's settings: min_samples 10 (BERTopic's min_topic_size), clusters of 10 posts and of 1% of the posts. */
const DENSITY_MIN_SAMPLES = 10;

interface RealOptions {
  command: string;
  sets: RealSet[];
  incremental: boolean;
  /** Incremental runs after the first full run. */
  runs: number;
  peers: boolean;
}

interface SetData {
  set: RealSet;
  title: string;
  tweets: LabelledTweet[];
  crises: string[];
  asOf: number;
  truth: Map<string, PostTruth>;
}

function loadSet(set: RealSet): SetData {
  let tweets: LabelledTweet[];
  if (set === 't6') tweets = readT6();
  else {
    const crisis = readT26();
    const times = crisis.map((t) => t.time);
    tweets = [...crisis, ...mixEveryday(everydayTexts(), EVERYDAY, Math.min(...times), Math.max(...times))];
  }
  const crises = [...new Set(tweets.flatMap((t) => (t.crisis ? [t.crisis] : [])))].sort();
  return {
    set,
    title: set === 't6' ? 'CrisisLexT6' : `CrisisLexT26 (11 crises) + ${EVERYDAY.toLocaleString('en-US')} everyday tweets`,
    tweets,
    crises,
    asOf: Math.max(...tweets.map((t) => t.time)) + 1000,
    truth: new Map(tweets.map((t) => [t.uuid, { crisis: t.onTopic ? t.crisis : null, story: t.infoType }])),
  };
}

async function run(
  dataDir: string,
  asOf: number,
): Promise<{ ms: number; stageMs: Record<string, number>; mode: string; fullBecause: string | null }> {
  const config = loadConfig({ ...process.env, DATA_DIR: dataDir, LOG_LEVEL: 'silent' });
  const t0 = performance.now();
  const r = await runStages(resolveStages(['run']), { config, log: createLogger('bench', 'silent'), asOf: new Date(asOf), tty: false });
  const ms = performance.now() - t0;
  const layout = dataDirLayout(dataDir);
  const manifest = await readManifest(layout, (await readCurrent(layout))!);
  return {
    ms,
    stageMs: Object.fromEntries(r.stages.map((s) => [s.stage, s.ms])),
    mode: manifest.run?.mode ?? '?',
    fullBecause: manifest.run?.full_because ?? null,
  };
}

function freshDir(name: string): string {
  const dir = path.join(ROOT, 'bench', '.cache', name);
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(path.join(dir, 'landing'), { recursive: true });
  return dir;
}

const log = (s: string) => process.stderr.write(`quality real: ${s}\n`);

async function fullRun(d: SetData) {
  const dataDir = freshDir(`real-${d.set}-full`);
  writeNdjson(path.join(dataDir, 'landing', 'tweets.ndjson'), d.tweets.map(tweetPost));
  log(`${d.set}: full run on ${d.tweets.length} tweets ...`);
  const r = await run(dataDir, d.asOf);
  return { dataDir, ms: r.ms, stageMs: r.stageMs, figures: await generationFigures(dataDir, d.truth) };
}

async function incrementalRun(d: SetData, runs: number) {
  const dataDir = freshDir(`real-${d.set}-incremental`);
  const arrivals = hourlyArrivals(d.tweets, runs + 1, d.asOf);
  const runsDone: Array<{
    tweets: number;
    hours: number;
    spanHours: number;
    asOf: string;
    ms: number;
    mode: string;
    fullBecause: string | null;
  }> = [];
  for (const [i, a] of arrivals.entries()) {
    writeNdjson(path.join(dataDir, 'landing', `arrival-${String(i).padStart(3, '0')}.ndjson`), a.tweets.map(tweetPost));
    const r = await run(dataDir, a.asOf);
    const span = Math.floor(a.tweets.at(-1)!.time / HOUR_MS) - Math.floor(a.tweets[0]!.time / HOUR_MS) + 1;
    runsDone.push({
      tweets: a.tweets.length,
      hours: a.hours,
      spanHours: span,
      asOf: new Date(a.asOf).toISOString(),
      ms: r.ms,
      mode: r.mode,
      fullBecause: r.fullBecause,
    });
    log(`${d.set}: arrival ${i + 1}/${arrivals.length} (${a.tweets.length} tweets, ${r.mode}) ${(r.ms / 1000).toFixed(1)} s`);
  }
  return { runs: runsDone, ms: runsDone.reduce((a, r) => a + r.ms, 0), figures: await generationFigures(dataDir, d.truth) };
}

interface PeerFigures {
  /** Column name in the per-crisis table. */
  key: string;
  method: string;
  params: string;
  ms: number;
  score: StoryScore;
}

/** The peers on the full run's posts (window all), scored as ours. */
async function peers(d: SetData, dataDir: string): Promise<{ versions: string; list: PeerFigures[] }> {
  const layout = dataDirLayout(dataDir);
  const dir = generationDir(layout, (await readCurrent(layout))!);
  const db = await openDuckDB();
  let uuids: string[];
  try {
    uuids = (
      await db.all<{ uuid: string }>(`SELECT uuid FROM read_parquet(${sqlString(path.join(dir, 'posts.parquet'))}) ORDER BY uuid`)
    ).map((r) => r.uuid);
  } finally {
    db.close();
  }
  const posts = new Map(uuids.map((u) => [u, d.truth.get(u)!]));
  const text = new Map(d.tweets.map((t) => [t.uuid, t.text]));
  const k = d.crises.length;
  const list: PeerFigures[] = [];
  const clustersOf = (labels: number[], rows: string[]) => {
    const m = new Map<string, string[]>();
    labels.forEach((l, i) => {
      if (l < 0) return;
      const list = m.get(String(l)) ?? [];
      list.push(rows[i]!);
      m.set(String(l), list);
    });
    return m;
  };
  log(`${d.set}: TF-IDF + k-means and NMF at k = ${k} on ${uuids.length} posts ...`);
  const topics = runTopicPeers(
    uuids.map((u) => text.get(u)!),
    [
      { method: 'kmeans', k, seed: 0 },
      { method: 'nmf', k, seed: 0 },
    ],
  );
  for (const r of topics.results)
    list.push({
      key: r.method === 'kmeans' ? 'k-means' : 'NMF',
      method: r.method === 'kmeans' ? 'TF-IDF + k-means' : 'NMF on TF-IDF, dominant topic',
      params: `k = ${k} (the true number of crises)`,
      ms: r.ms,
      score: scoreStories(posts, clustersOf(r.assignment, uuids)),
    });
  const v = textVectors(dir, (u) => posts.has(u));
  const sizes = [10, Math.round(uuids.length / 100)];
  log(`${d.set}: HDBSCAN on ${v.uuids.length} post vectors (dim ${v.dim}) ...`);
  const density = runDensityPeer(v.vectors, v.dim, DENSITY_MIN_SAMPLES, sizes, dataDir);
  for (const r of density.results)
    list.push({
      key: `HDBSCAN ${r.minClusterSize}`,
      method: 'HDBSCAN on our post vectors',
      params: `min_samples ${DENSITY_MIN_SAMPLES}, min_cluster_size ${r.minClusterSize}`,
      ms: density.treeMs + r.ms,
      score: scoreStories(posts, clustersOf(r.labels, v.uuids)),
    });
  return { versions: `scikit-learn ${topics.version}, numpy ${density.version}`, list };
}

/** The scalar figures of a generation, by name, for the incremental-vs-full comparison. */
function scalars(g: GenerationFigures): Map<string, number> {
  const out = new Map<string, number>();
  for (const w of g.windows) {
    const put = (name: string, x: number | null | undefined) => {
      if (x !== null && x !== undefined && Number.isFinite(x)) out.set(`${w.window} ${name}`, x);
    };
    put('mean best narrative F1', w.narrative.meanBestF1);
    for (const [c, f] of Object.entries(w.narrative.bestF1)) put(`${c} best narrative F1`, f);
    put('purity', w.narrative.purity);
    put('crisis x type purity', w.narrative.storyPurity);
    put('off-topic inside', w.narrative.offTopicInside);
    if (w.theme) {
      put('mean best theme F1', w.theme.meanBestF1);
      put('theme purity', w.theme.purity);
      for (const [c, f] of Object.entries(w.theme.bestF1)) put(`${c} best theme F1`, f);
    }
  }
  return out;
}

/** The largest difference between the two generations' figures (of one window when `only` is given). */
function worstGap(a: GenerationFigures, b: GenerationFigures, only?: string): { name: string; gap: number } {
  const x = scalars(a);
  const y = scalars(b);
  let worst = { name: 'none', gap: 0 };
  for (const [name, v] of x) {
    const w = y.get(name);
    if (only && !name.startsWith(`${only} `)) continue;
    if (w !== undefined && Math.abs(v - w) > worst.gap) worst = { name, gap: Math.abs(v - w) };
  }
  return worst;
}

const f3 = (x: number | null | undefined) => (x === null || x === undefined || !Number.isFinite(x) ? 'n/a' : x.toFixed(3));
const pct = (x: number) => (Number.isFinite(x) ? `${(100 * x).toFixed(1)}%` : 'n/a');
const cell = (s: string) => s.replace(/\|/g, '\\|').replace(/\s+/g, ' ');
const bar = (ok: boolean) => (ok ? 'met' : 'missed');
const short = (crisis: string) => crisis.replace(/^\d{4}_/, '').replace(/_/g, ' ');
const all = (g: GenerationFigures) => g.windows.find((w) => w.window === 'all')!;
const minOf = (r: Record<string, number>) => Math.min(...Object.values(r));

interface SetResult {
  set: RealSet;
  title: string;
  tweets: number;
  crises: string[];
  /** On-topic tweets of each crisis. */
  onTopicBy: Record<string, number>;
  asOf: string;
  full: Awaited<ReturnType<typeof fullRun>>;
  incremental: Awaited<ReturnType<typeof incrementalRun>> | null;
  peers: Awaited<ReturnType<typeof peers>> | { error: string } | null;
}

function barsTable(r: SetResult): string {
  const rows: string[] = [];
  const runs: Array<[string, GenerationFigures]> = [['full', r.full.figures]];
  if (r.incremental) runs.push(['incremental', r.incremental.figures]);
  const line = (what: string, fig: (g: GenerationFigures) => { text: string; ok: boolean }) => {
    const cells = runs.map(([, g]) => fig(g));
    rows.push(`| ${what} | ${cells.map((c) => `${c.text} (${bar(c.ok)})`).join(' | ')} |`);
  };
  line('mean best-theme F1, window all >= 0.85', (g) => {
    const t = all(g).theme;
    return t ? { text: f3(t.meanBestF1), ok: t.meanBestF1 >= 0.85 } : { text: 'n/a: no themes.parquet', ok: false };
  });
  line('every crisis best-theme F1, window all >= 0.60 (lowest)', (g) => {
    const t = all(g).theme;
    return t ? { text: f3(minOf(t.bestF1)), ok: minOf(t.bestF1) >= 0.6 } : { text: 'n/a', ok: false };
  });
  line('narrative purity against the crisis (off-topic a label), window all >= 0.90', (g) => ({
    text: f3(all(g).narrative.purity),
    ok: all(g).narrative.purity >= 0.9,
  }));
  line("theme purity against the crisis (off-topic a label), window all >= 0.90 (at most the narratives' purity)", (g) => {
    const t = all(g).theme;
    return t ? { text: f3(t.purity), ok: t.purity >= 0.9 } : { text: 'n/a', ok: false };
  });
  line('no catch-all in any window (catch-alls: 7d, 30d, 90d, all)', (g) => {
    const n = g.windows.map((w) => w.narrative.catchAlls.length);
    return { text: n.join(', '), ok: n.every((x) => x === 0) };
  });
  line('off-topic tweets inside narratives <= 50%, every window (highest)', (g) => {
    const xs = g.windows.map((w) => w.narrative.offTopicInside).filter(Number.isFinite);
    const top = Math.max(...xs);
    return { text: pct(top), ok: top <= 0.5 };
  });
  if (r.incremental) {
    const gap = worstGap(r.full.figures, r.incremental.figures);
    const inAll = worstGap(r.full.figures, r.incremental.figures, 'all');
    rows.push(
      `| incremental within 0.05 of full, every figure above in every window (largest gap; in window all) | ${f3(gap.gap)}: ${gap.name} (${bar(
        gap.gap <= 0.05,
      )}); ${f3(inAll.gap)}: ${inAll.name} | |`,
    );
  }
  return `| bar | ${runs.map(([n]) => n).join(' | ')} |\n|---|${runs.map(() => '---|').join('')}\n${rows.join('\n')}`;
}

function windowsTable(r: SetResult): string {
  const runs: Array<[string, GenerationFigures]> = [['full', r.full.figures]];
  if (r.incremental) runs.push(['incremental', r.incremental.figures]);
  const rows = runs.flatMap(([name, g]) =>
    g.windows.map(
      (w: WindowFigures) =>
        `| ${w.window} | ${name} | ${w.posts.toLocaleString('en-US')} | ${w.narratives} | ${w.themes ?? 'n/a'} | ${f3(w.narrative.meanBestF1)} | ${f3(
          w.theme?.meanBestF1,
        )} | ${f3(w.narrative.purity)} | ${f3(w.theme?.purity)} | ${f3(w.narrative.storyPurity)} | ${pct(w.narrative.offTopicInside)} | ${pct(w.narrative.noiseShare)} | ${
          w.narrative.catchAlls.length
        } | ${w.trendingOffTopic} of ${w.trending.length} |`,
    ),
  );
  return `| window | run | posts | narratives | themes | mean best narrative F1 | mean best theme F1 | purity (crisis) | theme purity (crisis) | purity (crisis x type) | off-topic inside narratives | posts in no narrative | catch-alls | trending top 10 mostly off-topic |
|---|---|---|---|---|---|---|---|---|---|---|---|---|---|
${rows.join('\n')}`;
}

function crisesTable(r: SetResult): string {
  const full = r.full.figures;
  const inc = r.incremental?.figures;
  const peerList = r.peers && 'list' in r.peers ? r.peers.list : [];
  const pair = (w: WindowFigures | undefined, c: string) =>
    w && c in w.narrative.bestF1 ? `${f3(w.narrative.bestF1[c])} / ${f3(w.theme?.bestF1[c])}` : '–';
  const header = `| crisis | on-topic | ${full.windows.map((w) => w.window).join(' | ')} |${inc ? ' all, incremental |' : ''}${peerList
    .map((p) => ` ${p.key} |`)
    .join('')}`;
  const cols = full.windows.length + 2 + (inc ? 1 : 0) + peerList.length;
  const rows = r.crises.map((c) => {
    return `| ${short(c)} | ${r.onTopicBy[c]!.toLocaleString('en-US')} | ${full.windows.map((w) => pair(w, c)).join(' | ')} |${
      inc ? ` ${pair(all(inc), c)} |` : ''
    }${peerList.map((p) => ` ${f3(p.score.bestF1[c])} |`).join('')}`;
  });
  return `${header}\n|${'---|'.repeat(cols)}\n${rows.join('\n')}`;
}

function peersTable(r: SetResult): string {
  if (!r.peers) return 'Peers: not run (--no-peers).';
  if ('error' in r.peers) return `Peers: not run: ${r.peers.error}`;
  const row = (name: string, params: string, s: StoryScore, ms: number | null) =>
    `| ${name} | ${params} | ${s.clusters} | ${f3(s.meanBestF1)} | ${f3(minOf(s.bestF1))} | ${f3(s.purity)} | ${f3(s.storyPurity)} | ${pct(
      s.offTopicInside,
    )} | ${pct(s.noiseShare)} | ${s.catchAlls.length} | ${ms === null ? '' : `${(ms / 1000).toFixed(1)} s`} |`;
  return `Window all, on the full run's posts; peers in the same run (${r.peers.versions}):

| method | settings | clusters | mean best F1 | lowest best F1 | purity (crisis) | purity (crisis x type) | off-topic inside clusters | posts in no cluster (noise) | catch-alls | time |
|---|---|---|---|---|---|---|---|---|---|---|
${row('ours: the narratives', 'window all, full run', all(r.full.figures).narrative, null)}
${r.peers.list.map((p) => row(p.method, p.params, p.score, p.ms)).join('\n')}`;
}

function trendingTables(g: GenerationFigures): string {
  return g.windows
    .map(
      (
        w,
      ) => `| ${w.window}: label (${w.trendingOffTopic} of ${w.trending.length} mostly off-topic) | posts | momentum | most posts from (share) | theme |
|---|---|---|---|---|
${w.trending
  .map(
    (t) =>
      `| ${t.mostlyOffTopic ? '**off-topic** ' : ''}${cell(t.label)} | ${t.posts} | ${t.momentum.toFixed(2)} | ${short(t.majority)} (${(100 * t.share).toFixed(0)}%) | ${
        t.theme === null ? '' : cell(t.theme)
      } |`,
  )
  .join('\n')}`,
    )
    .join('\n\n');
}

function catchAllList(g: GenerationFigures): string {
  const list = g.windows.flatMap((w) => w.catchAlls.map((c) => ({ ...c, window: w.window })));
  if (list.length === 0) return 'No catch-all in any window.';
  return `The catch-alls (largest 10 over the windows):

| window | label | posts | why | off-topic share |
|---|---|---|---|---|
${list
  .sort((a, b) => b.size - a.size)
  .slice(0, 10)
  .map(
    (c) =>
      `| ${c.window} | ${cell(c.label)} | ${c.size.toLocaleString('en-US')} | ${c.reason === 'mixed' ? 'mixes crises' : 'mostly off-topic'} | ${pct(c.offTopicShare)} |`,
  )
  .join('\n')}`;
}

function arrivalsLine(r: SetResult): string {
  const inc = r.incremental;
  if (!inc) return 'Incremental arrival: not run (--no-incremental).';
  const [first, ...rest] = inc.runs;
  const spans = rest.map((x) => x.spanHours).sort((a, b) => a - b);
  const sizes = rest.map((x) => x.tweets).sort((a, b) => a - b);
  const full = rest.filter((x) => x.mode === 'full').length;
  // Why the pipeline rebuilt in full (pipeline/refit-rule.ts), by kind.
  const because = new Map<string, number>();
  for (const x of rest.filter((x) => x.mode === 'full')) {
    const why = /grew/.test(x.fullBecause ?? '')
      ? 'the corpus grew by a quarter since the fit'
      : /days before/.test(x.fullBecause ?? '')
        ? 'the fit a week old'
        : (x.fullBecause ?? 'no reason given');
    because.set(why, (because.get(why) ?? 0) + 1);
  }
  return `Incremental arrival: the tweets in time order, whole hours at a time, cut into ${inc.runs.length} arrivals of about ${Math.round(
    r.tweets / inc.runs.length,
  ).toLocaleString('en-US')} tweets: a first full run on ${first!.tweets.toLocaleString('en-US')} tweets (up to ${first!.asOf}), then ${
    rest.length
  } runs of \`npm run pipeline -- run\`, each as of the end of its arrival's last hour (the last one as of ${r.asOf}); an arrival spans ${
    spans[0]
  } to ${spans.at(-1)} hours (median ${spans[spans.length >> 1]}) and holds ${sizes[0]} to ${sizes.at(-1)} tweets. ${full} of the ${
    rest.length
  } later runs rebuilt in full (the pipeline's refit rule${because.size ? `: ${[...because].map(([k, n]) => `${k} ${n}`).join(', ')}` : ''}), the others ran incrementally. All ${inc.runs.length} runs: ${(inc.ms / 1000).toFixed(0)} s.`;
}

function setSection(r: SetResult): string {
  const a = all(r.full.figures);
  return `### ${r.title}

${r.tweets.toLocaleString('en-US')} tweets, ${r.crises.length} crises, ${Object.values(r.onTopicBy)
    .reduce((x, y) => x + y, 0)
    .toLocaleString(
      'en-US',
    )} of them on-topic, as of ${r.asOf} (just after the last tweet). Full run: **${(r.full.ms / 1000).toFixed(1)} s** (${Object.entries(
    r.full.stageMs,
  )
    .map(([k, v]) => `${k} ${(v / 1000).toFixed(1)} s`)
    .join(', ')}), generation ${r.full.figures.generation}. ${arrivalsLine(r)}

${barsTable(r)}

Per window (posts: those published in the window):

${windowsTable(r)}

Best F1 of each crisis (narrative / theme; "–": no on-topic tweet of it in the window); the peers' on window all:

${crisesTable(r)}

${peersTable(r)}

${catchAllList(r.full.figures)}

Trending's top 10 per window, full run (GET /narratives/trending's order; **off-topic**: more than half of its posts are off-topic):

${trendingTables(r.full.figures)}

(${a.narratives} narratives in window all.)`;
}

export async function benchQualityReal(o: RealOptions): Promise<void> {
  const { machine, writeResultsJson, writeResultsSection } = await import('../results-file.ts');
  const t0 = performance.now();
  const head = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).trim();
  const dirty = execFileSync('git', ['status', '--porcelain', '--untracked-files=no'], { cwd: ROOT, encoding: 'utf8' }).trim() !== '';
  const results: SetResult[] = [];
  for (const set of o.sets) {
    const d = loadSet(set);
    const onTopicBy = Object.fromEntries(d.crises.map((c) => [c, d.tweets.filter((t) => t.crisis === c && t.onTopic).length]));
    const full = await fullRun(d);
    let peerFigures: SetResult['peers'] = null;
    if (o.peers) {
      try {
        peerFigures = await peers(d, full.dataDir);
      } catch (err) {
        peerFigures = { error: (err as Error).message };
        log(`${set}: peers not run: ${(err as Error).message}`);
      }
    }
    const incremental = o.incremental ? await incrementalRun(d, o.runs) : null;
    results.push({
      set,
      title: d.title,
      tweets: d.tweets.length,
      crises: d.crises,
      onTopicBy,
      asOf: new Date(d.asOf).toISOString(),
      full,
      incremental,
      peers: peerFigures,
    });
  }
  const ms = performance.now() - t0;
  const date = new Date().toISOString();
  const section = `quality-real${o.sets.length === 1 ? `-${o.sets[0]}` : ''}${o.incremental ? '' : '-no-incremental'}`;
  writeResultsJson(section, { date, machine: machine(), command: o.command, commit: head, dirty, ms, results });
  const md = `## Narratives on real crises: CrisisLexT6 and the T26 set (issue 38)

Command: \`${o.command}\` — ${date.slice(0, 10)}, ${machine()}, commit ${head}${dirty ? ' (with uncommitted changes)' : ''}; the whole bench **${(ms / 60_000).toFixed(1)} min**. Real tweets at their real times (their snowflake ids; \`../shared/data/crisislex\`, fixtures/crisislex.ts) ingested as posts of platform x; the T26 set's everyday tweets are ${EVERYDAY.toLocaleString('en-US')} of TweetEval's corpus (a seeded choice), their times spread evenly over the T26 tweets' span, labelled off-topic. T26 tweets "Not related" or "Not applicable" are off-topic; the others on-topic, their information type the story. Best F1 of a crisis: the best-matching cluster's F1 against the crisis's on-topic tweets in the window (a theme's members: its narratives' members). Purity: over the posts inside narratives, the share carrying their narrative's majority label (off-topic a label of its own; crisis x type: crisis/information type); theme purity the same over themes (merging narratives never raises it, so the narratives' purity bounds it). Catch-all: a narrative of more than max(200, 5% of the window's posts) that is mostly off-topic or whose on-topic tweets are under 70% from one crisis. The bars are issue 38's, theme purity's issue 45's.

${results.map(setSection).join('\n\n')}`;
  writeResultsSection(section, md);
  process.stdout.write(md + '\n');
}
