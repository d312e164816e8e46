// Narratives on real crises (part of `npm run bench -- quality`, --part real; issue 38): two sets of
// real tweets at their real times (fixtures/crisislex.ts), CrisisLexT6 (6 crises, 60,078 tweets,
// half of them the everyday talk of the same places and days) and the T26 set (11 crises of
// CrisisLexT26 with 15,000 everyday TweetEval tweets mixed in), each
//   1. in a full run on a fresh data dir as of just after its last tweet;
//   2. arriving in time order, whole hours at a time, through incremental runs (a first full run on
//      the first arrival), the last one as of the same instant;
// and the final generation of both scored per window (bench/lib/story-figures.ts): narratives and
// themes, each crisis's best narrative and theme F1, purity against the crisis and against crisis x
// information type, off-topic tweets inside narratives, catch-alls. Through a server over each of
// the two (bench/lib/served-lists.ts; issue 45): where each crisis first ranks on the first page of
// GET /narratives/trending and GET /themes in the server's default order, the mostly off-topic items
// above, and every narrative's lifecycle beside its daily counts. On the full run's data, `run --full`
// again and the alerts watches would get from it (bench/lib/rebuild-alerts.ts). Beside them, on the
// full run's posts: TF-IDF + k-means and NMF at the true number of crises (scikit-learn), and
// HDBSCAN on the post vectors the pipeline embedded (bench/peers/density_peer.py). A third set, the
// user trial (fixtures/crisislex.ts, userTrial): three crises and a hand-written story of the last
// days among a month of everyday tweets, what a new user would try first.
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
  userTrial,
} from '../../fixtures/crisislex.ts';
import { NEW_WORD_STORIES } from '../../fixtures/new-word-stories.ts';
import { resolveStages, runStages } from '../../pipeline/run/runner.ts';
import { textLanguage } from '../../core/text/language.ts';
import { textVectors } from '../lib/generation-vectors.ts';
import { runDensityPeer } from '../lib/density-peer.ts';
import { CONDITIONS, MOMENTUM_LEVEL, rebuildAlerts } from '../lib/rebuild-alerts.ts';
import { MIN_CRISIS_POSTS, servedLists, type ListItem, type ServedWindow } from '../lib/served-lists.ts';
import { generationFigures, type GenerationFigures, type WindowFigures } from '../lib/story-figures.ts';
import { runTopicPeers } from '../lib/topic-peers.ts';
import { startServer } from './api.ts';
import { writeNdjson } from './pipeline-incremental.ts';

const ROOT = path.resolve(import.meta.dirname, '..', '..');
export const REAL_SETS = ['t6', 't26', 'trial'] as const;
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
  /** `run --full` again on the full run's data and the alerts it fires. */
  alerts: boolean;
}

interface SetData {
  set: RealSet;
  title: string;
  tweets: LabelledTweet[];
  crises: string[];
  asOf: number;
  truth: Map<string, PostTruth>;
  /** Each crisis's on-topic tweets by language (core/text/language.ts; null: too few function words to tell). */
  languages: Record<string, Map<string | null, number>>;
  /** A crisis is looked for on a window's first pages where it has this many on-topic tweets. */
  minPosts: number;
}

/** The user trial's as-of, and the least of its planted story a window must hold for it to be looked for (a narrative's least size). */
const TRIAL_AS_OF = Date.parse('2026-11-20T12:00:00Z');
const TRIAL_MIN_POSTS = 15;

function setTweets(set: RealSet): LabelledTweet[] {
  if (set === 't6') return readT6();
  if (set === 'trial') return userTrial(TRIAL_AS_OF, NEW_WORD_STORIES[0]!);
  const crisis = readT26();
  const times = crisis.map((t) => t.time);
  return [...crisis, ...mixEveryday(everydayTexts(), EVERYDAY, Math.min(...times), Math.max(...times))];
}

const SET_TITLES: Record<RealSet, string> = {
  t6: 'CrisisLexT6',
  t26: `CrisisLexT26 (11 crises) + ${EVERYDAY.toLocaleString('en-US')} everyday tweets`,
  trial:
    'The user trial (issue 45): 6,000 everyday tweets over 30 days, three T26 crises begun 10, 7 and 5 days before as-of, a hand-written story (the IslaLink ferry strike, 20 posts) in the last 2 days',
};

function loadSet(set: RealSet): SetData {
  const tweets = setTweets(set);
  const crises = [...new Set(tweets.flatMap((t) => (t.crisis ? [t.crisis] : [])))].sort();
  const languages: SetData['languages'] = Object.fromEntries(crises.map((c) => [c, new Map()]));
  for (const t of tweets) {
    if (!t.crisis || !t.onTopic) continue;
    const l = textLanguage(t.text);
    languages[t.crisis]!.set(l, (languages[t.crisis]!.get(l) ?? 0) + 1);
  }
  return {
    set,
    title: SET_TITLES[set],
    tweets,
    crises,
    asOf: set === 'trial' ? TRIAL_AS_OF : Math.max(...tweets.map((t) => t.time)) + 1000,
    minPosts: set === 'trial' ? TRIAL_MIN_POSTS : MIN_CRISIS_POSTS,
    truth: new Map(tweets.map((t) => [t.uuid, { crisis: t.onTopic ? t.crisis : null, story: t.infoType }])),
    languages,
  };
}

async function run(
  dataDir: string,
  asOf: number,
  full = false,
): Promise<{ ms: number; stageMs: Record<string, number>; mode: string; fullBecause: string | null }> {
  const config = loadConfig({ ...process.env, DATA_DIR: dataDir, LOG_LEVEL: 'silent' });
  const t0 = performance.now();
  const r = await runStages(resolveStages(['run']), {
    config,
    log: createLogger('bench', 'silent'),
    asOf: new Date(asOf),
    tty: false,
    full,
  });
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

/** The current generation of `dataDir` scored, and its map lists read through a server of its own (SEARCH_THREADS=0: only free reads). */
async function scored(d: SetData, dataDir: string): Promise<{ figures: GenerationFigures; served: ServedWindow[] }> {
  const figures = await generationFigures(dataDir, d.truth);
  const server = await startServer(dataDir, 0);
  try {
    const onTopicBy = new Map(figures.windows.map((w) => [w.window, w.onTopicBy]));
    return {
      figures,
      served: await servedLists({ baseUrl: server.baseUrl, key: server.key }, figures.generation, d.truth, onTopicBy, d.minPosts),
    };
  } finally {
    if (server.proc.exitCode === null) {
      const exited = new Promise((r) => server.proc.once('exit', r));
      server.proc.kill('SIGTERM');
      await exited;
    }
  }
}

async function fullRun(d: SetData) {
  const dataDir = freshDir(`real-${d.set}-full`);
  writeNdjson(path.join(dataDir, 'landing', 'tweets.ndjson'), d.tweets.map(tweetPost));
  log(`${d.set}: full run on ${d.tweets.length} tweets ...`);
  const r = await run(dataDir, d.asOf);
  return { dataDir, ms: r.ms, stageMs: r.stageMs, ...(await scored(d, dataDir)) };
}

/** `run --full` again on the full run's unchanged data: the alerts watches made before it would get. */
async function rebuildRun(d: SetData, dataDir: string, before: string) {
  const watchesAt = new Date().toISOString();
  log(`${d.set}: run --full again on the same data (alerts) ...`);
  const r = await run(dataDir, d.asOf, true);
  const after = (await readCurrent(dataDirLayout(dataDir)))!;
  return { ms: r.ms, ...(await rebuildAlerts(dataDir, before, after, watchesAt)) };
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
    const r = await run(dataDir, a.asOfMs);
    const span = Math.floor(a.tweets.at(-1)!.time / HOUR_MS) - Math.floor(a.tweets[0]!.time / HOUR_MS) + 1;
    runsDone.push({
      tweets: a.tweets.length,
      hours: a.hours,
      spanHours: span,
      asOf: new Date(a.asOfMs).toISOString(),
      ms: r.ms,
      mode: r.mode,
      fullBecause: r.fullBecause,
    });
    log(`${d.set}: arrival ${i + 1}/${arrivals.length} (${a.tweets.length} tweets, ${r.mode}) ${(r.ms / 1000).toFixed(1)} s`);
  }
  return { runs: runsDone, ms: runsDone.reduce((a, r) => a + r.ms, 0), ...(await scored(d, dataDir)) };
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
      put('theme purity', w.theme.purity);
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
  /** Each crisis's on-topic tweets by language ('null': not told). */
  languages: Record<string, Record<string, number>>;
  alerts: Awaited<ReturnType<typeof rebuildRun>> | null;
}

/** One run's figures: the generation's and what its server listed. */
interface RunFigures {
  name: 'full' | 'incremental';
  figures: GenerationFigures;
  served: ServedWindow[];
}

function runsOf(r: SetResult): RunFigures[] {
  return [{ name: 'full', ...r.full }, ...(r.incremental ? [{ name: 'incremental' as const, ...r.incremental }] : [])];
}

type ListName = 'trending' | 'themes';
const LISTS: ReadonlyArray<[ListName, string]> = [
  ['trending', 'GET /narratives/trending'],
  ['themes', 'GET /themes'],
];

/** A list's first pages over the four windows: crisis pairs found and qualifying, mostly off-topic items above the last found crisis. */
function listTotals(served: readonly ServedWindow[], list: ListName) {
  const ranks = served.flatMap((w) => Object.values(w[list].firstRank));
  return {
    found: ranks.filter((x) => x !== null).length,
    pairs: ranks.length,
    above: served.reduce((a, w) => a + w[list].offTopicAbove, 0),
    aboveBy: served.map((w) => w[list].offTopicAbove),
  };
}

/** A bar's cell for one run: its figure and whether it meets the bar (null: no verdict, the part was not run); null: no cell. */
type BarLine = (what: string, fig: (run: RunFigures) => { text: string; ok: boolean | null } | null) => void;

/** Issue 38's bars. */
function storyBars(line: BarLine): void {
  line('mean best-theme F1, window all >= 0.85', ({ figures: g }) => {
    const t = all(g).theme;
    return t ? { text: f3(t.meanBestF1), ok: t.meanBestF1 >= 0.85 } : { text: 'n/a: no themes.parquet', ok: false };
  });
  line('every crisis best-theme F1, window all >= 0.60 (lowest)', ({ figures: g }) => {
    const t = all(g).theme;
    return t ? { text: f3(minOf(t.bestF1)), ok: minOf(t.bestF1) >= 0.6 } : { text: 'n/a', ok: false };
  });
  line('narrative purity against the crisis (off-topic a label), window all >= 0.90', ({ figures: g }) => ({
    text: f3(all(g).narrative.purity),
    ok: all(g).narrative.purity >= 0.9,
  }));
  line("theme purity against the crisis (off-topic a label), window all >= 0.90 (at most the narratives' purity)", ({ figures: g }) => {
    const t = all(g).theme;
    return t ? { text: f3(t.purity), ok: t.purity >= 0.9 } : { text: 'n/a', ok: false };
  });
  line('no catch-all in any window (catch-alls: 7d, 30d, 90d, all)', ({ figures: g }) => {
    const n = g.windows.map((w) => w.narrative.catchAlls.length);
    return { text: n.join(', '), ok: n.every((x) => x === 0) };
  });
  line('off-topic tweets inside narratives <= 50%, every window (highest)', ({ figures: g }) => {
    const xs = g.windows.map((w) => w.narrative.offTopicInside).filter(Number.isFinite);
    const top = Math.max(...xs);
    return { text: pct(top), ok: top <= 0.5 };
  });
}

/** Issue 45's bars: the lists' first pages, theme purity, lifecycles against the daily counts, a rebuild's alerts. */
function servedBars(line: BarLine, r: SetResult): void {
  line('theme purity against the crisis (off-topic a label), window all >= 0.90', ({ figures: g }) => {
    const t = all(g).theme;
    return t ? { text: f3(t.purity), ok: t.purity >= 0.9 } : { text: 'n/a', ok: false };
  });
  for (const [list, what] of LISTS) {
    line(`${what}, first page: (crisis, window) pairs found >= 90%, four windows summed`, ({ served }) => {
      const t = listTotals(served, list);
      return { text: `${t.found} of ${t.pairs} (${pct(t.found / t.pairs)})`, ok: t.found >= 0.9 * t.pairs };
    });
    line(
      `${what}, first page: mostly off-topic items above the last found crisis <= 2, four windows summed (7d, 30d, 90d, all)`,
      ({ served }) => {
        const t = listTotals(served, list);
        return { text: `${t.above} (${t.aboveBy.join(', ')})`, ok: t.above <= 2 };
      },
    );
  }
  line('narratives emerging or growing whose last 3 days average under 1/4 of their peak day: 0, four windows summed', ({ served }) => {
    const n = served.map((w) => w.lifecycle.fading.length);
    const sum = n.reduce((a, b) => a + b, 0);
    return { text: `${sum} (${n.join(', ')})`, ok: sum === 0 };
  });
  line('new-narrative events of `run --full` on unchanged data: 0 (7d, 30d, 90d, all)', ({ name }) => {
    if (name !== 'full') return null;
    if (!r.alerts) return { text: 'not run (--no-alerts)', ok: null };
    const n = r.alerts.windows.map((w) => w.events.new_narrative ?? 0);
    const sum = n.reduce((a, b) => a + b, 0);
    return { text: `${sum} (${n.join(', ')})`, ok: sum === 0 };
  });
}

function barsTable(r: SetResult): string {
  const rows: string[] = [];
  const runs = runsOf(r);
  const line: BarLine = (what, fig) => {
    const cells = runs.map((run) => fig(run));
    rows.push(`| ${what} | ${cells.map((c) => (!c ? '–' : c.ok === null ? c.text : `${c.text} (${bar(c.ok)})`)).join(' | ')} |`);
  };
  storyBars(line);
  servedBars(line, r);
  if (r.incremental) {
    const gap = worstGap(r.full.figures, r.incremental.figures);
    const inAll = worstGap(r.full.figures, r.incremental.figures, 'all');
    rows.push(
      `| incremental within 0.05 of full, every figure above in every window (largest gap; in window all) | ${f3(gap.gap)}: ${gap.name} (${bar(
        gap.gap <= 0.05,
      )}); ${f3(inAll.gap)}: ${inAll.name} | |`,
    );
    const found = LISTS.map(([list]) => listTotals(r.incremental!.served, list).found - listTotals(r.full.served, list).found);
    rows.push(
      `| incremental's pairs found within 1 of full (incremental minus full: trending; themes) | ${found.join('; ')} (${bar(
        found.every((x) => Math.abs(x) <= 1),
      )}) | |`,
    );
  }
  return `| bar | ${runs.map((x) => x.name).join(' | ')} |\n|---|${runs.map(() => '---|').join('')}\n${rows.join('\n')}`;
}

function windowsTable(r: SetResult): string {
  const rows = runsOf(r).flatMap(({ name, figures: g, served }) =>
    g.windows.map((w: WindowFigures) => {
      const top = served.find((s) => s.window === w.window)!.trending.items.slice(0, 10);
      return `| ${w.window} | ${name} | ${w.posts.toLocaleString('en-US')} | ${w.narratives} | ${w.themes ?? 'n/a'} | ${f3(w.narrative.meanBestF1)} | ${f3(
        w.theme?.meanBestF1,
      )} | ${f3(w.narrative.purity)} | ${f3(w.theme?.purity)} | ${f3(w.narrative.storyPurity)} | ${pct(w.narrative.offTopicInside)} | ${pct(
        w.narrative.noiseShare,
      )} | ${w.narrative.catchAlls.length} | ${top.filter((t) => t.mostlyOffTopic).length} of ${top.length} |`;
    }),
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

const itemRow = (t: ListItem, rank: boolean) =>
  `| ${rank ? `${t.rank} | ` : ''}${t.mostlyOffTopic ? '**off-topic** ' : ''}${cell(t.label)} | ${t.posts} | ${t.momentum.toFixed(2)} | ${short(
    t.majority,
  )} (${(100 * t.share).toFixed(0)}%) |`;

function trendingTables(served: readonly ServedWindow[]): string {
  return served
    .map((w) => {
      const top = w.trending.items.slice(0, 10);
      return `| ${w.window}: label (${top.filter((t) => t.mostlyOffTopic).length} of ${top.length} mostly off-topic) | posts | momentum | most posts from (share) | theme |
|---|---|---|---|---|
${top.map((t) => `${itemRow(t, false)} ${t.theme === null ? '' : cell(t.theme)} |`).join('\n')}`;
    })
    .join('\n\n');
}

/** Each crisis's first rank on a list's first page per window and run, with the pairs found and the off-topic items above. */
function firstPageTable(r: SetResult, list: ListName): string {
  const runs = runsOf(r);
  const cols = runs.flatMap((run) => run.served.map((w) => ({ run: run.name, w })));
  const head = cols.map((c) => (c.run === 'full' ? c.w.window : `${c.w.window}, ${c.run}`));
  const rank = (c: (typeof cols)[number], crisis: string) => {
    if (!(crisis in c.w[list].firstRank)) return '–';
    const x = c.w[list].firstRank[crisis];
    return x === null ? 'not found' : String(x);
  };
  const rows = r.crises.map((crisis) => `| ${short(crisis)} | ${cols.map((c) => rank(c, crisis)).join(' | ')} |`);
  const found = cols.map((c) => {
    const rs = Object.values(c.w[list].firstRank);
    return `${rs.filter((x) => x !== null).length} of ${rs.length}`;
  });
  const above = cols.map((c) =>
    c.w[list].lastFound === null ? '0 (none found)' : `${c.w[list].offTopicAbove} (above rank ${c.w[list].lastFound})`,
  );
  return `| crisis | ${head.join(' | ')} |
|---|${cols.map(() => '---|').join('')}
${rows.join('\n')}
| **pairs found** | ${found.join(' | ')} |
| **mostly off-topic items above the last found crisis** | ${above.join(' | ')} |`;
}

/** T6: every item ranked above the last found crisis's first item, full run, so a reader can tell an event from steady talk. */
function aboveTable(r: SetResult): string {
  const rows: string[] = [];
  for (const w of r.full.served)
    for (const [list] of LISTS) {
      const l = w[list];
      if (l.lastFound === null) continue;
      for (const t of l.items.filter((i) => i.rank < l.lastFound!)) rows.push(`| ${w.window} | ${list} |${itemRow(t, true).slice(1)}`);
    }
  if (rows.length === 0) return 'No item ranks above a found crisis on any first page (full run).';
  return `Items ranked above the last found crisis's first item, full run (**off-topic**: more than half of its posts off-topic):

| window | list | rank | label | posts | momentum | most posts from (share) |
|---|---|---|---|---|---|---|
${rows.join('\n')}`;
}

/** Shares of the languages told, largest first (those of at least 2%), and the share not told. */
function languageLine(counts: Record<string, number>): string {
  const total = Object.values(counts).reduce((a, b) => a + b, 0);
  const untold = counts['null'] ?? 0;
  const told = Object.entries(counts)
    .filter(([l, n]) => l !== 'null' && n >= 0.02 * (total - untold))
    .sort((a, b) => b[1] - a[1])
    .map(([l, n]) => `${l} ${((100 * n) / (total - untold)).toFixed(0)}%`);
  return `${told.join(', ') || 'none told'} (${((100 * untold) / total).toFixed(0)}% too short to tell)`;
}

/** Best-theme F1 in window all per crisis with its languages, the mean and the theme purity. */
function themeF1Table(r: SetResult): string {
  const runs = runsOf(r);
  const themeOf = (run: RunFigures) => all(run.figures).theme;
  const rows = r.crises.map(
    (c) => `| ${short(c)} | ${languageLine(r.languages[c]!)} | ${runs.map((run) => f3(themeOf(run)?.bestF1[c])).join(' | ')} |`,
  );
  return `| crisis | languages of its on-topic tweets (core/text/language.ts) | ${runs.map((x) => `best-theme F1, all, ${x.name}`).join(' | ')} |
|---|---|${runs.map(() => '---|').join('')}
${rows.join('\n')}
| **mean** | | ${runs.map((run) => f3(themeOf(run)?.meanBestF1)).join(' | ')} |
| **theme purity (crisis)** | | ${runs.map((run) => f3(themeOf(run)?.purity)).join(' | ')} |`;
}

const LIFECYCLES = ['emerging', 'growing', 'peaking', 'steady', 'declining', 'dormant', 'none'];

/** Lifecycles per window against the narratives' own daily counts. */
function lifecycleTable(r: SetResult): string {
  const runs = runsOf(r);
  const rows = runs.flatMap((run) =>
    run.served.map((w) => {
      const c = w.lifecycle.counts;
      const n = Object.values(c).reduce((a, b) => a + b, 0);
      return `| ${w.window} | ${run.name} | ${n} | ${LIFECYCLES.map((l) => c[l] ?? 0).join(' | ')} | ${w.lifecycle.fading.length} |`;
    }),
  );
  const fading = runs.flatMap((run) =>
    run.served.flatMap((w) => w.lifecycle.fading.map((f) => ({ ...f, run: run.name, window: w.window }))),
  );
  const list = fading.length
    ? `\n\nThe emerging or growing narratives fading by their daily counts (up to 12):\n\n| run | window | label | lifecycle | peak day | last 3 days (mean) | posts |\n|---|---|---|---|---|---|---|\n${fading
        .slice(0, 12)
        .map((f) => `| ${f.run} | ${f.window} | ${cell(f.label)} | ${f.lifecycle} | ${f.peak} | ${f.last3.toFixed(1)} | ${f.posts} |`)
        .join('\n')}`
    : '';
  return `| window | run | narratives | ${LIFECYCLES.join(' | ')} | emerging or growing, last 3 days < 1/4 of peak |
|---|---|---|${LIFECYCLES.map(() => '---|').join('')}---|
${rows.join('\n')}${list}`;
}

function alertsSection(r: SetResult): string {
  const a = r.alerts;
  if (!a) return 'Alerts on a rebuild: not run (--no-alerts).';
  const rows = a.windows.map(
    (w) => `| ${w.window} | ${w.before} | ${w.after} | ${w.kept} | ${CONDITIONS.map((c) => w.events[c] ?? 0).join(' | ')} |`,
  );
  const labels = a.windows.flatMap((w) => w.newLabels.map((l) => `${w.window}: ${cell(l)}`));
  return `\`run --full\` again on the full run's unchanged data (${(a.ms / 1000).toFixed(1)} s): generation ${a.after} after ${a.before}${
    a.previousIsBefore ? '' : ' (**its manifest names another previous generation**)'
  }. ${a.watches} watches made before it, evaluated by serve/alerts/evaluate.ts as the server does after a publish: a new_narrative watch on any narrative in each window, and one on any narrative in every window for a spike, any lifecycle change and momentum crossing ${MOMENTUM_LEVEL} upward. Events by condition:

| window | narratives before | after | after with a narrative_key before had | ${CONDITIONS.join(' | ')} |
|---|---|---|---|${CONDITIONS.map(() => '---|').join('')}
${rows.join('\n')}${labels.length ? `\n\nNew narratives (up to 10): ${labels.slice(0, 10).join('; ')}.` : ''}`;
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
  // Why the pipeline rebuilt in full (pipeline/features/refit-rule.ts), by kind.
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

${LISTS.map(
  ([list, what]) => `Where each crisis first ranks on the first page of \`${what}?window=W\` (the server's default order and page size, ${
    r.full.served[0]![list].limit
  } items; "–": under ${MIN_CRISIS_POSTS} on-topic tweets in the window, not looked for):

${firstPageTable(r, list)}`,
).join('\n\n')}

${r.set === 't6' ? `${aboveTable(r)}\n\n` : ''}Best-theme F1 of each crisis, window all, with the languages of its on-topic tweets:

${themeF1Table(r)}

Lifecycles per window (GET /narratives/trending?daily=true, every page) beside each narrative's own daily counts:

${lifecycleTable(r)}

${alertsSection(r)}

Trending's top 10 per window, full run (the first page of GET /narratives/trending in the server's default order; **off-topic**: more than half of its posts are off-topic):

${trendingTables(r.full.served)}

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
    // After the peers: they read the full run's generation, which the rebuild replaces.
    const alerts = o.alerts ? await rebuildRun(d, full.dataDir, full.figures.generation) : null;
    const incremental = o.incremental ? await incrementalRun(d, o.runs) : null;
    results.push({
      set,
      title: d.title,
      tweets: d.tweets.length,
      crises: d.crises,
      onTopicBy,
      languages: Object.fromEntries(Object.entries(d.languages).map(([c, m]) => [c, Object.fromEntries(m)])),
      asOf: new Date(d.asOf).toISOString(),
      full,
      incremental,
      peers: peerFigures,
      alerts,
    });
  }
  const ms = performance.now() - t0;
  const date = new Date().toISOString();
  const section = `quality-real${o.sets.length === 1 ? `-${o.sets[0]}` : ''}${o.incremental ? '' : '-no-incremental'}`;
  writeResultsJson(section, { date, machine: machine(), command: o.command, commit: head, dirty, ms, results });
  const md = `## Narratives on real crises: CrisisLexT6 and the T26 set (issues 38 and 45)

Command: \`${o.command}\` — ${date.slice(0, 10)}, ${machine()}, commit ${head}${dirty ? ' (with uncommitted changes)' : ''}; the whole bench **${(ms / 60_000).toFixed(1)} min**. Real tweets at their real times (their snowflake ids; \`../shared/data/crisislex\`, fixtures/crisislex.ts) ingested as posts of platform x; the T26 set's everyday tweets are ${EVERYDAY.toLocaleString('en-US')} of TweetEval's corpus (a seeded choice), their times spread evenly over the T26 tweets' span, labelled off-topic. T26 tweets "Not related" or "Not applicable" are off-topic; the others on-topic, their information type the story. Best F1 of a crisis: the best-matching cluster's F1 against the crisis's on-topic tweets in the window (a theme's members: its narratives' members). Purity: over the posts inside narratives, the share carrying their narrative's majority label (off-topic a label of its own; crisis x type: crisis/information type); theme purity the same over themes (merging narratives never raises it, so the narratives' purity bounds it). Catch-all: a narrative of more than max(200, 5% of the window's posts) that is mostly off-topic or whose on-topic tweets are under 70% from one crisis. First pages (issue 45): each list read through a server over the generation, \`?window=W\` alone (the server's default order and page size); an item's posts are its members (a theme's: its narratives'); an item is mostly a crisis when more than half of its posts are that crisis's on-topic tweets, mostly off-topic when more than half are no crisis's on-topic tweets; a crisis is looked for in a window where it has at least ${MIN_CRISIS_POSTS} on-topic tweets (the user trial's story: ${TRIAL_MIN_POSTS}), and found when an item of the first page is mostly it (its rank: the first such item's); the mostly off-topic items above a found crisis: per window, those ranked above the last found crisis's first item on that page, summed over the four windows. The bars are issue 38's and issue 45's.

${results.map(setSection).join('\n\n')}`;
  writeResultsSection(section, md);
  process.stdout.write(md + '\n');
}
