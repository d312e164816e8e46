// Narrative quality on the fixture's planted truth (part of `npm run bench -- quality`):
//   NMI and ARI of window `all`'s narratives (noise a label of its own) against the planted
//   narratives (noise posts labelled noise), over the posts with a text vector;
//   lifecycle agreement: each planted narrative's lifecycle against that of the narrative holding
//   most of its posts;
//   key stability: the pipeline re-run one day later on the same posts; share of continuing
//   planted narratives whose majority narrative keeps its narrative_key (windows all and 30d).
import type { TrendingRow } from '../lib/story-figures.ts';
import fs from 'node:fs';
import path from 'node:path';
import { loadConfig } from '../../core/infra/config.ts';
import { dataDirLayout } from '../../core/infra/data-dir.ts';
import { openDuckDB, sqlString } from '../../core/infra/duckdb.ts';
import { generationDir, readCurrent } from '../../core/snapshots/generations.ts';
import { createLogger } from '../../core/infra/log.ts';
import { generateCorpus } from '../../fixtures/generate.ts';
import { resolveStages, runStages } from '../../pipeline/run/runner.ts';
import { ari, nmi } from '../../core/stats/cluster-metrics.ts';
import { trendingOrder } from '../../serve/maps/narrative-routes.ts';
import { uuidsWithVector } from '../lib/generation-vectors.ts';
import { plantedStory } from '../../fixtures/planted-story.ts';

export const NARRATIVES_AS_OF = '2026-11-01T00:00:00.000Z';
const ROOT = path.resolve(import.meta.dirname, '..', '..');

interface Truth {
  narratives: Map<string, { lifecycle: string; posts: number }>;
  postNarrative: Map<string, string | null>;
}

function readTruth(file: string): Truth {
  const narratives = new Map<string, { lifecycle: string; posts: number }>();
  const postNarrative = new Map<string, string | null>();
  for (const line of fs.readFileSync(file, 'utf8').split('\n')) {
    if (!line) continue;
    const t = JSON.parse(line) as {
      type: string;
      id?: string;
      uuid?: string;
      lifecycle?: string;
      posts?: number;
      narrative?: string | null;
    };
    if (t.type === 'narrative') narratives.set(t.id!, { lifecycle: t.lifecycle!, posts: t.posts! });
    else if (t.type === 'post') postNarrative.set(t.uuid!, t.narrative ?? null);
  }
  return { narratives, postNarrative };
}

async function runWith(dataDir: string, asOf: string) {
  const config = loadConfig({ ...process.env, DATA_DIR: dataDir, LOG_LEVEL: 'silent' });
  return runStages(resolveStages(['run']), { config, log: createLogger('bench', 'silent'), asOf: new Date(asOf), tty: false });
}

async function run(dataDir: string, asOf: string): Promise<Record<string, number>> {
  const r = await runWith(dataDir, asOf);
  return Object.fromEntries(r.stages.map((s) => [s.stage, s.ms]));
}

interface StoryFound {
  window: string;
  label: string;
  /** The story's posts in the narrative holding most of them (of 30), and its size. */
  caught: number;
  size: number;
}

/**
 * Issue 19's planted story (fixtures/planted-story.ts: 30 posts over two days about a made-up
 * kombucha recall) added to the corpus and run in: per window, the narrative holding most of it.
 */
async function plantStory(dataDir: string, asOf: string): Promise<{ mode: string; found: StoryFound[] }> {
  const posts = plantedStory(new Date(asOf));
  fs.writeFileSync(path.join(dataDir, 'landing', 'planted-story.ndjson'), posts.map((p) => JSON.stringify(p)).join('\n') + '\n');
  const r = await runWith(dataDir, asOf);
  const mode = String((r.stages.find((s) => s.stage === 'features')?.summary as { mode?: string } | undefined)?.mode ?? '?');
  const layout = dataDirLayout(dataDir);
  const dir = generationDir(layout, (await readCurrent(layout))!);
  const db = await openDuckDB();
  try {
    const f = (n: string) => sqlString(path.join(dir, n));
    const rows = await db.all<{ window_key: string; label: string; caught: bigint; size: bigint }>(`
      SELECT window_key, label, caught, size FROM (
        SELECT m.window_key, n.label, count(*) FILTER (WHERE m.uuid LIKE 'planted-story-%') AS caught, count(*) AS size,
          row_number() OVER (PARTITION BY m.window_key ORDER BY count(*) FILTER (WHERE m.uuid LIKE 'planted-story-%') DESC, count(*)) AS rank
        FROM read_parquet(${f('narrative-members.parquet')}) m JOIN read_parquet(${f('narratives.parquet')}) n ON n.id = m.narrative_id
        GROUP BY m.window_key, n.label, m.narrative_id) WHERE rank = 1 ORDER BY window_key`);
    return { mode, found: rows.map((x) => ({ window: x.window_key, label: x.label, caught: Number(x.caught), size: Number(x.size) })) };
  } finally {
    db.close();
  }
}

interface Member {
  narrative_id: string;
  narrative_key: string;
  window_key: string;
  uuid: string;
  lifecycle: string | null;
}

async function members(dataDir: string): Promise<{ members: Member[]; posts: string[]; withVector: Set<string> }> {
  const layout = dataDirLayout(dataDir);
  const dir = generationDir(layout, (await readCurrent(layout))!);
  const db = await openDuckDB();
  try {
    const f = (n: string) => sqlString(path.join(dir, n));
    const m = await db.all<Member & Record<string, unknown>>(`SELECT m.narrative_id, n.narrative_key, m.window_key, m.uuid, n.lifecycle
      FROM read_parquet(${f('narrative-members.parquet')}) m JOIN read_parquet(${f('narratives.parquet')}) n ON n.id = m.narrative_id`);
    const posts = (await db.all<{ uuid: string }>(`SELECT uuid FROM read_parquet(${f('posts.parquet')})`)).map((r) => r.uuid);
    return { members: m, posts, withVector: uuidsWithVector(dir, 'text') };
  } finally {
    db.close();
  }
}

/** For each planted narrative, the predicted narrative holding most of its posts in `window`. */
function majority(truth: Truth, ms: Member[], window: string): Map<string, Member> {
  const votes = new Map<string, Map<string, { n: number; m: Member }>>();
  for (const m of ms) {
    if (m.window_key !== window) continue;
    const planted = truth.postNarrative.get(m.uuid);
    if (!planted) continue;
    const v = votes.get(planted) ?? new Map<string, { n: number; m: Member }>();
    const e = v.get(m.narrative_id) ?? { n: 0, m };
    e.n++;
    v.set(m.narrative_id, e);
    votes.set(planted, v);
  }
  return new Map(
    [...votes].map(([p, v]) => [p, [...v.values()].sort((a, b) => b.n - a.n || (a.m.narrative_id < b.m.narrative_id ? -1 : 1))[0]!.m]),
  );
}

interface TrendingEntry {
  label: string;
  posts: number;
  momentum: number;
  /** The planted narrative most of its posts belong to ('noise': posts of no narrative), and that share. */
  planted: string;
  share: number;
}

/** A window's trending top 10 (GET /narratives/trending's order), each with the planted story behind it. */
async function trendingTop(dataDir: string, truth: Truth, ms: Member[]): Promise<Record<string, TrendingEntry[]>> {
  const layout = dataDirLayout(dataDir);
  const dir = generationDir(layout, (await readCurrent(layout))!);
  const db = await openDuckDB();
  let rows: TrendingRow[];
  try {
    rows = (
      await db.all<(typeof rows)[number]>(
        `SELECT id, window_key, label, content_count::INTEGER AS content_count, momentum_score, emerging_score, burst_score FROM read_parquet(${sqlString(path.join(dir, 'narratives.parquet'))})`,
      )
    ).map((r) => ({ ...r, content_count: Number(r.content_count) }));
  } finally {
    db.close();
  }
  const votes = new Map<string, Map<string, number>>();
  for (const m of ms) {
    const v = votes.get(m.narrative_id) ?? new Map<string, number>();
    const p = truth.postNarrative.get(m.uuid) ?? 'noise';
    v.set(p, (v.get(p) ?? 0) + 1);
    votes.set(m.narrative_id, v);
  }
  const out: Record<string, TrendingEntry[]> = {};
  for (const w of ['7d', '30d', '90d', 'all']) {
    out[w] = rows
      .filter((r) => r.window_key === w)
      .sort(trendingOrder)
      .slice(0, 10)
      .map((r) => {
        const v = [...(votes.get(r.id) ?? new Map<string, number>())].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
        const total = v.reduce((a, [, n]) => a + n, 0);
        return {
          label: r.label,
          posts: r.content_count,
          momentum: r.momentum_score,
          planted: v[0]?.[0] ?? 'noise',
          share: total ? v[0]![1] / total : 0,
        };
      });
  }
  return out;
}

interface NarrativeQuality {
  posts: number;
  nmi: number;
  ari: number;
  narratives: number;
  planted: number;
  noiseShare: number;
  lifecycle: { agree: number; total: number; byShape: Record<string, { agree: number; total: number }> };
  keyStability: Record<string, { kept: number; total: number }>;
  stageMs: Record<string, number>;
  trending: Record<string, TrendingEntry[]>;
  story: { asOf: string; mode: string; found: StoryFound[] };
}

async function measureNarrativeQuality(posts: number, seed = 42): Promise<NarrativeQuality> {
  const dataDir = path.join(ROOT, 'bench', '.cache', `narratives-${posts}`);
  const truthFile = `${dataDir}.truth.ndjson`;
  fs.rmSync(dataDir, { recursive: true, force: true });
  await generateCorpus({ posts, outDir: path.join(dataDir, 'landing', 'corpus'), truthFile, seed, asOf: NARRATIVES_AS_OF, media: false });
  const truth = readTruth(truthFile);
  const stageMs = await run(dataDir, NARRATIVES_AS_OF);
  const first = await members(dataDir);

  const inAll = new Map(first.members.filter((m) => m.window_key === 'all').map((m) => [m.uuid, m.narrative_id]));
  const scored = first.posts.filter((u) => first.withVector.has(u));
  const truthLabels = scored.map((u) => truth.postNarrative.get(u) ?? 'noise');
  const predLabels = scored.map((u) => inAll.get(u) ?? 'noise');

  const byShape: Record<string, { agree: number; total: number }> = {};
  let agree = 0;
  let total = 0;
  for (const [planted, m] of majority(truth, first.members, 'all')) {
    const shape = truth.narratives.get(planted)!.lifecycle;
    const s = (byShape[shape] ??= { agree: 0, total: 0 });
    s.total++;
    total++;
    if (m.lifecycle === shape) (s.agree++, agree++);
  }

  const trending = await trendingTop(dataDir, truth, first.members);

  // Re-run one day later: same posts, windows one day on.
  const next = new Date(Date.parse(NARRATIVES_AS_OF) + 86_400_000).toISOString();
  stageMs.rerun = Object.values(await run(dataDir, next)).reduce((a, b) => a + b, 0);
  const second = await members(dataDir);
  const keyStability: Record<string, { kept: number; total: number }> = {};
  for (const w of ['all', '30d']) {
    const before = majority(truth, first.members, w);
    const after = majority(truth, second.members, w);
    let kept = 0;
    let n = 0;
    for (const [planted, m] of before) {
      const a = after.get(planted);
      if (!a) continue;
      n++;
      if (a.narrative_key === m.narrative_key) kept++;
    }
    keyStability[w] = { kept, total: n };
  }
  // The planted story arrives an hour after the re-run.
  const storyAsOf = new Date(Date.parse(next) + 3_600_000).toISOString();
  const story = { asOf: storyAsOf, ...(await plantStory(dataDir, storyAsOf)) };
  return {
    posts: scored.length,
    nmi: nmi(truthLabels, predLabels),
    ari: ari(truthLabels, predLabels),
    narratives: new Set(first.members.filter((m) => m.window_key === 'all').map((m) => m.narrative_id)).size,
    planted: truth.narratives.size,
    noiseShare: predLabels.filter((l) => l === 'noise').length / Math.max(1, predLabels.length),
    lifecycle: { agree, total, byShape },
    keyStability,
    stageMs,
    trending,
    story,
  };
}

/** The planted story's test (test/slow/planted-story.test.ts): most of it in one narrative that is mostly it. */
function storyFound(x: StoryFound): boolean {
  return x.caught >= 24 && x.caught >= 0.8 * x.size;
}

/** How many trending entries (all windows) are real stories: most of their posts one planted narrative. */
function storyShare(trending: Record<string, TrendingEntry[]>): string {
  const all = Object.values(trending).flat();
  const stories = all.filter((t) => t.planted !== 'noise' && t.share > 0.5).length;
  return `${stories} of ${all.length}`;
}

export async function benchQualityNarratives(o: { posts: number; command: string }): Promise<void> {
  const { machine, writeResultsJson, writeResultsSection } = await import('../results-file.ts');
  const q = await measureNarrativeQuality(o.posts);
  const result = { date: new Date().toISOString(), machine: machine(), command: o.command, corpusPosts: o.posts, ...q };
  writeResultsJson('quality-narratives', result);
  const f = (x: number, d = 3) => x.toFixed(d);
  const pct = (a: number, b: number) => `${b ? ((100 * a) / b).toFixed(1) : '0.0'}% (${a}/${b})`;
  const shapes = Object.entries(q.lifecycle.byShape)
    .sort()
    .map(([s, v]) => `${s} ${v.agree}/${v.total}`)
    .join(', ');
  const md = `## Narrative quality on the fixture's planted truth

Command: \`${o.command}\` — ${result.date.slice(0, 10)}, ${result.machine}. A generated corpus of ${o.posts.toLocaleString('en-US')} posts (seed 42, media off, ${q.planted} planted narratives, each with a planted lifecycle), the whole pipeline as of ${NARRATIVES_AS_OF}, then again one day later on the same posts.

| measure | value | bar |
|---|---|---|
| NMI, window all, vs planted narratives (noise a label of its own; ${q.posts.toLocaleString('en-US')} posts with text) | **${f(q.nmi)}** | >= 0.85 (${q.nmi >= 0.85 ? 'met' : 'missed'}) |
| ARI, same | ${f(q.ari)} | |
| narratives found (window all) / planted | ${q.narratives} / ${q.planted} | |
| posts left as noise | ${(100 * q.noiseShare).toFixed(1)}% | |
| lifecycle agreement (each planted narrative vs the narrative holding most of its posts) | **${pct(q.lifecycle.agree, q.lifecycle.total)}** | >= 80% (${q.lifecycle.agree >= 0.8 * q.lifecycle.total ? 'met' : 'missed'}) |
| narrative_key kept on the re-run a day later, window all | **${pct(q.keyStability.all!.kept, q.keyStability.all!.total)}** | >= 90% |
| same, window 30d | ${pct(q.keyStability['30d']!.kept, q.keyStability['30d']!.total)} | |

Lifecycle by planted shape: ${shapes}. Stage times of the first run: ${Object.entries(q.stageMs)
    .filter(([k]) => k !== 'rerun')
    .map(([k, v]) => `${k} ${(v / 1000).toFixed(1)} s`)
    .join(
      ', ',
    )}; the whole re-run ${(q.stageMs.rerun! / 1000).toFixed(1)} s. ARI, which counts every pair of posts a split or a merge separates, is well below NMI; how much of that comes from planted narratives split in two (${q.narratives} clusters for ${q.planted} planted) is not measured here.

Trending's top 10 per window of the first run (GET /narratives/trending's order), each with the planted narrative most of its posts belong to ("noise": the corpus's chatter, posts of no story) and that share. A real story is a narrative most of whose posts are one planted narrative: ${storyShare(q.trending)}.

${Object.entries(q.trending)
  .map(
    ([w, list]) => `| ${w}: label | posts | momentum | planted story (share) |
|---|---|---|---|
${list.map((t) => `| ${t.label.replace(/\|/g, '\\|')} | ${t.posts} | ${t.momentum.toFixed(2)} | ${t.planted} (${(100 * t.share).toFixed(0)}%) |`).join('\n')}`,
  )
  .join('\n\n')}

A small new story (issue 19; \`fixtures/planted-story.ts\`): 30 posts over two days about a made-up kombucha mould recall, sharing "recall" with the corpus's EV recall and "mould" with its houseplant chatter, added after the re-run and run in as of ${q.story.asOf} (a${q.story.mode === 'incremental' ? 'n incremental' : ` ${q.story.mode}`} run). Per window, the narrative holding most of its posts; found = at least 24 of the 30 in one narrative that is at least 80% the story's: ${q.story.found.filter(storyFound).length} of ${q.story.found.length} windows. A narrative needs max(5, 0.2% of its window's posts) members: in a window of more than 15,000 posts, 30 posts cannot form one (90d and all hold this corpus's 20,000).

| window | narrative | story posts in it (of 30) | its posts | found |
|---|---|---|---|---|
${q.story.found.map((x) => `| ${x.window} | ${x.label.replace(/\|/g, '\\|')} | ${x.caught} | ${x.size} | ${storyFound(x) ? 'yes' : 'no'} |`).join('\n')}`;
  writeResultsSection('quality-narratives', md);
  process.stdout.write(md + '\n');
}
