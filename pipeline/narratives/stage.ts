// The narratives stage: per window (7d, 30d, 90d, all), clusters of the window's posts with every
// field of a narrative (docs/api.md, "Narrative") that does not depend on a query (build.ts), keys carried over from the served
// generation (tracking.ts), and their history; the flow is the map stages' skeleton (map-stage.ts),
// with the steps below. Outputs, in artifacts/:
//   narratives.parquet            one row per narrative (columns in docs/snapshot-tables.md)
//   narrative-members.parquet     narrative_id, window_key, row_id, uuid, similarity, rank
//   narrative-trajectory.parquet  per narrative_key and window, its metrics in every generation kept
//   narrative-centroids.f32       narratives x dim float32, in narratives.parquet order
//   narrative-text.bin           BM25 postings over each narrative's label, summary, tags and their words
//   narrative-member-terms.bin   each narrative's most distinctive member terms, counted in posts (text-index.ts)
//   themes.parquet               one row per theme: the window's narratives grouped (pipeline/narratives/themes/), whose
//                                ids narratives.parquet's theme_id names
import path from 'node:path';
import { writeFileAtomic } from '../../core/infra/durable-fs.ts';
import { CLUSTER_DEFAULTS } from '../../core/clustering/kmeans-by-silhouette.ts';
import { STORY_DEFAULTS } from '../../core/clustering/stories.ts';
import { runMapStage, type MapRun, type MapStage, type MapSteps, type MapWritten, type TrackedWindow } from '../maps/map-stage.ts';
import { mergeWindows, type MapFiles } from '../maps/previous-map.ts';
import { writeRowTable } from '../store/row-table.ts';
import { writeMemberTable } from '../maps/member-table.ts';
import type { Stage, StageContext } from '../context/stage-context.ts';
import { buildThemes } from './themes/build.ts';
import { nameThemes } from './themes/name-themes.ts';
import { loadPreviousThemes, type PreviousTheme } from './themes/previous-themes.ts';
import { writeThemeTable, type NamedTheme } from './themes/theme-table.ts';
import { buildWindow, storyWords, type BuiltNarrative } from './build.ts';
import { loadNarrativeCorpus, type NarrativeCorpus } from './corpus.ts';
import { FIGURE_COLUMNS, figureValues, HEAD_COLUMNS, READER_COLUMNS, readerValues } from './figure-columns.ts';
import { writeNarrativeText } from './text-index.ts';

const NARRATIVE_COLUMNS = {
  id: 'VARCHAR',
  narrative_key: 'VARCHAR',
  ...HEAD_COLUMNS,
  ...FIGURE_COLUMNS,
  ...READER_COLUMNS,
  score_breakdown: 'VARCHAR',
  daily_counts: 'INTEGER[]',
  centroid_index: 'INTEGER',
  previous_id: 'VARCHAR',
  match_cosine: 'DOUBLE',
  match_overlap: 'DOUBLE',
  theme_id: 'VARCHAR',
  row_id: 'BIGINT',
} as const;

const TRAJECTORY_COLUMNS = {
  row_id: 'BIGINT',
  narrative_key: 'VARCHAR',
  window_key: 'VARCHAR',
  generation: 'VARCHAR',
  as_of: 'VARCHAR',
  computed_at: 'VARCHAR',
  narrative_id: 'VARCHAR',
  content_count: 'BIGINT',
  creator_count: 'BIGINT',
  total_engagement: 'DOUBLE',
  velocity: 'DOUBLE',
  acceleration: 'DOUBLE',
  momentum_score: 'DOUBLE',
  emerging_score: 'DOUBLE',
  lifecycle: 'VARCHAR',
  sentiment_score: 'DOUBLE',
} as const;

const NARRATIVE_MAP: MapFiles = {
  table: 'narratives.parquet',
  members: 'narrative-members.parquet',
  trajectory: 'narrative-trajectory.parquet',
  id: 'id',
  key: 'narrative_key',
  group: 'window_key',
  memberOf: 'narrative_id',
};

/** Title and description of the given rows (for extractive summaries). */
function textReader(ctx: StageContext): (rows: number[]) => Promise<Map<number, string>> {
  return async (rows) => {
    if (rows.length === 0) return new Map();
    const db = await ctx.db();
    const res = await db.all<{ row_id: number; title: string | null; description: string | null }>(
      `SELECT s.row_id, p.title, p.description FROM snap s JOIN posts p USING (uuid) WHERE s.row_id IN (${rows.join(',')})`,
    );
    return new Map(res.map((r) => [Number(r.row_id), [r.title, r.description].filter(Boolean).join('. ')]));
  };
}

/** The narratives stage's summary. */
type NarrativesSummary = {
  narratives: number;
  themes: number;
  members: number;
  previousGeneration: string | null;
  mode: MapRun<NarrativeCorpus>['plan']['mode'];
  /** Each window's figures, by its key. */
  windows: Record<string, unknown>;
  loadMs: number;
  previousMs: number;
  mergeMs: number;
  /** The map search's indexes (text-index.ts). */
  text: Awaited<ReturnType<typeof writeNarrativeText>>;
  writeMs: number;
  ms: number;
};

/** The narratives' own steps in the map stages' skeleton (map-stage.ts). */
const NARRATIVES_MAP: MapStage<NarrativeCorpus, BuiltNarrative, NarrativesSummary> = {
  name: 'narratives',
  files: NARRATIVE_MAP,
  trajectoryColumns: TRAJECTORY_COLUMNS,
  keyPrefix: 'nk',
  tagSeed: '',
  missing: 'no index to build narratives from: run the features and index stages first',
  stale: (s, at) => `the index was built for as-of ${s.asOf}; run the features and index stages for ${at} first`,
  loadCorpus: loadNarrativeCorpus,
  merge: (corpus, windows) =>
    mergeWindows(
      corpus,
      windows,
      { ...CLUSTER_DEFAULTS, minClusterSize: STORY_DEFAULTS.minClusterSize, minClusterShare: STORY_DEFAULTS.minClusterShare },
      { words: storyWords(corpus), opts: STORY_DEFAULTS },
    ),
  open: openNarratives,
};

function runNarratives(ctx: StageContext): Promise<NarrativesSummary> {
  return runMapStage(ctx, NARRATIVES_MAP);
}

type Window = TrackedWindow<BuiltNarrative>;

/** A narrative's id in this run, the served narrative it continues, and its theme. */
interface Placed {
  id: string;
  match: { id: string; cosine: number; overlap: number } | null;
  themeId: string;
}

/** The steps of one run: every window's narratives described, then grouped into named themes. */
async function openNarratives(run: MapRun<NarrativeCorpus>): Promise<MapSteps<BuiltNarrative, NarrativesSummary>> {
  const previousThemes = await loadPreviousThemes(run.ctx, run.previous);
  const readText = textReader(run.ctx);
  const themes: NamedTheme[] = [];
  const placed: Placed[] = [];
  return {
    build: (spec, prior, merged) =>
      buildWindow(run.corpus, spec, run.ctx.asOf.getTime(), readText, STORY_DEFAULTS, prior, merged ?? undefined),
    window: async (w) => {
      const t = await themeWindow(run, w, readText, previousThemes.get(w.spec.key) ?? []);
      themes.push(...t.themes);
      placed.push(...t.placed);
      return t.figures;
    },
    write: (windows) => writeNarratives(run, windows, themes, placed),
  };
}

/** A window's themes (its narratives grouped, pipeline/narratives/themes/), named; each narrative's id, match and theme. */
async function themeWindow(
  run: MapRun<NarrativeCorpus>,
  w: Window,
  readText: (rows: number[]) => Promise<Map<number, string>>,
  previousThemes: PreviousTheme[],
): Promise<{ themes: NamedTheme[]; placed: Placed[]; figures: Record<string, unknown> }> {
  const key = w.spec.key;
  const narratives = w.built.clusters;
  const tt = performance.now();
  const wt = await buildThemes(run.corpus, w.spec, narratives, run.ctx.asOf.getTime(), readText);
  const themeMs = performance.now() - tt;
  // The rows a narrative or theme names: its first member, its representative, its central posts.
  await run.name(
    [...narratives, ...wt.themes].flatMap((n) => [n.members[0]!, ...(n.representative === null ? [] : [n.representative]), ...n.central]),
  );
  const themes = nameThemes(key, run.runTag, wt.themes, previousThemes, (r) => run.named.get(r)!);
  const placed = narratives.map((_, i) => {
    const m = w.matches[i];
    const match = m ? { id: w.previous[m.previous]!.id, cosine: m.cosine, overlap: m.overlap } : null;
    return { id: `${key}-${run.runTag}-${String(i + 1).padStart(3, '0')}`, match, themeId: themes[wt.themeOf[i]!]!.id };
  });
  const figures = {
    themes: wt.themes.length,
    themeSilhouette: Number(wt.grouping.silhouette.toFixed(3)),
    themesContinued: themes.filter((t) => t.match).length,
    themeMs: Math.round(themeMs),
  };
  return { themes, placed, figures };
}

/** Every window's narratives and themes into their tables, centroids and text index; the trajectory's rows and the summary to the skeleton. */
async function writeNarratives(
  run: MapRun<NarrativeCorpus>,
  windows: Window[],
  themes: NamedTheme[],
  placed: Placed[],
): Promise<MapWritten<NarrativesSummary>> {
  const { ctx, corpus } = run;
  const all = windows.flatMap((w) => w.built.clusters.map((n, i) => ({ n, key: w.keys[i]! })));
  const narrativeRows = all.map(({ n, key }, i) => narrativeRow(run, n, key, placed[i]!, i));
  await writeRowTable(ctx, 'narratives', NARRATIVE_COLUMNS, narrativeRows);
  await writeThemeTable(ctx, themes, run.computedAt, (r) => run.named.get(r));
  const centroids = new Float32Array(all.length * corpus.dim);
  all.forEach(({ n }, i) => centroids.set(n.centroid, i * corpus.dim));
  await writeFileAtomic(path.join(ctx.layout.artifacts, 'narrative-centroids.f32'), new Uint8Array(centroids.buffer));
  await writeMemberTable(
    ctx,
    'narrative-members',
    { owner: 'narrative_id', group: 'window_key' },
    all.map(({ n }, i) => ({ owner: placed[i]!.id, group: n.window.key, members: n.members, similarity: n.similarity })),
  );
  // The map search reads these: row i is narratives.parquet row i.
  const text = await writeNarrativeText(
    ctx.layout.artifacts,
    corpus,
    all.map(({ n }) => ({ label: n.label, summary: n.summary, topTags: n.topTags, members: n.members })),
  );
  return {
    trajectory: narrativeRows.map((r) => trajectoryRow(run, r)),
    summary: (times, figures) => ({
      narratives: all.length,
      themes: themes.length,
      members: all.reduce((s, { n }) => s + n.members.length, 0),
      previousGeneration: run.previous?.generation ?? null,
      mode: run.plan.mode,
      windows: figures,
      loadMs: times.loadMs,
      previousMs: times.previousMs,
      mergeMs: times.mergeMs,
      text,
      writeMs: times.writeMs,
      ms: times.ms,
    }),
  };
}

/** One row of narratives.parquet. */
function narrativeRow(run: MapRun<NarrativeCorpus>, n: BuiltNarrative, key: string, { id, match, themeId }: Placed, i: number) {
  return {
    row_id: i,
    id,
    narrative_key: key,
    window_key: n.window.key,
    window_start: n.window.start,
    window_end: n.window.end,
    computed_at: run.computedAt,
    label: n.label,
    summary: n.summary,
    ...figureValues(n, n.representative === null ? null : run.named.get(n.representative)),
    ...readerValues(n, (r) => run.named.get(r)),
    score_breakdown: JSON.stringify({
      content_count: n.contentCount,
      creator_count: n.creatorCount,
      platform_count: n.platformCount,
      total_engagement: n.totalEngagement,
      clustering_method: 'key-term-stories',
      ...(n.seedTag ? { seed_tag: n.seedTag } : {}),
    }),
    daily_counts: Array.from(n.series.counts),
    centroid_index: i,
    previous_id: match?.id ?? null,
    match_cosine: match?.cosine ?? null,
    match_overlap: match?.overlap ?? null,
    theme_id: themeId,
  };
}

/** A narrative's row in this run's trajectory: its metrics now. */
function trajectoryRow(run: MapRun<NarrativeCorpus>, r: ReturnType<typeof narrativeRow>): Record<string, unknown> {
  return {
    narrative_key: r.narrative_key,
    window_key: r.window_key,
    as_of: run.asOfIso,
    computed_at: run.computedAt,
    narrative_id: r.id,
    content_count: r.content_count,
    creator_count: r.creator_count,
    total_engagement: Number(r.total_engagement),
    velocity: r.velocity,
    acceleration: r.acceleration,
    momentum_score: r.momentum_score,
    emerging_score: r.emerging_score,
    lifecycle: r.lifecycle,
    sentiment_score: r.sentiment_score,
  };
}

export const narrativesStage: Stage<'narratives', NarrativesSummary> = {
  name: 'narratives',
  description: "cluster each window's posts into narratives: labels, momentum, lifecycle, sentiment, keys tracked across generations",
  run: runNarratives,
};
