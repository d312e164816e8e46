// The narratives stage: per window (7d, 30d, 90d, all), clusters of the window's posts with every
// field of a narrative (docs/api.md, "Narrative") that does not depend on a query (build.ts), keys carried over from the served
// generation (tracking.ts), and their history. Outputs, in artifacts/:
//   narratives.parquet            one row per narrative (columns in docs/snapshot-tables.md)
//   narrative-members.parquet     narrative_id, window_key, row_id, uuid, similarity, rank
//   narrative-trajectory.parquet  per narrative_key and window, its metrics in every generation kept
//   narrative-centroids.f32       narratives x dim float32, in narratives.parquet order
//   narrative-text.bin           BM25 postings over each narrative's label, summary, tags and their words
//   narrative-member-terms.bin   each narrative's most distinctive member terms, counted in posts (text-index.ts)
//   themes.parquet               one row per theme: the window's narratives grouped (pipeline/themes/), whose
//                                ids narratives.parquet's theme_id names
import { createHash } from 'node:crypto';
import path from 'node:path';
import { writeFileAtomic } from '../../core/infra/durable-fs.ts';
import { WINDOW_KEYS, windowBounds } from '../../core/snapshots/windows.ts';
import { rowWindows, uuidsOf } from '../post-columns.ts';
import { continued, currentSpace, loadPreviousMap, mergeWindows, writeTrajectory, type MapFiles } from '../previous-map.ts';
import { writeRowTable } from '../row-table.ts';
import { writeMemberTable } from '../member-table.ts';
import { readPlan } from '../segment-plan.ts';
import { requireArtifactSource, snapshotWhere } from '../snapshot-rows.ts';
import type { Stage, StageContext, StageSummary } from '../stage-context.ts';
import { StageAborted } from '../stage-context.ts';
import { buildWindow, storyWords, type BuiltNarrative } from './build.ts';
import { CLUSTER_DEFAULTS } from '../../core/clustering/kmeans-by-silhouette.ts';
import { STORY_DEFAULTS } from '../../core/clustering/stories.ts';
import { loadNarrativeCorpus, type NarrativeCorpus } from './corpus.ts';
import { writeNarrativeText } from './text-index.ts';
import { matchClusters, newMapKey } from '../../core/clustering/tracking.ts';
import { buildThemes } from '../themes/build.ts';
import { nameThemes } from '../themes/name-themes.ts';
import { loadPreviousThemes } from '../themes/previous-themes.ts';
import { writeThemeTable, type NamedTheme } from '../themes/theme-table.ts';
import { FIGURE_COLUMNS, figureValues, HEAD_COLUMNS } from './figure-columns.ts';

export const NARRATIVE_COLUMNS = {
  id: 'VARCHAR',
  narrative_key: 'VARCHAR',
  ...HEAD_COLUMNS,
  ...FIGURE_COLUMNS,
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

export async function runNarratives(ctx: StageContext): Promise<StageSummary> {
  const t0 = performance.now();
  const { artifacts } = ctx.layout;
  const asOf = ctx.asOf.toISOString();
  const source = await requireArtifactSource(
    ctx,
    path.join(artifacts, 'source.json'),
    'no index to build narratives from: run the features and index stages first',
    (s, at) => `the index was built for as-of ${s.asOf}; run the features and index stages for ${at} first`,
  );
  const plan = await readPlan(ctx);
  const corpus: NarrativeCorpus = await loadNarrativeCorpus(ctx, plan);
  const tLoad = performance.now() - t0;
  const db = await ctx.db();
  const [e] = await db.all<{ earliest: number | null }>(
    `SELECT epoch_ms(min(published_at))::DOUBLE AS earliest FROM posts WHERE ${snapshotWhere(asOf)}`,
  );
  const bounds = windowBounds(ctx.asOf, e?.earliest != null ? new Date(Number(e.earliest)) : null);
  const computedAt = new Date().toISOString();
  const runTag = createHash('sha256').update(`${asOf}\n${source.ingestVersion}\n${computedAt}`).digest('hex').slice(0, 8);
  const space = currentSpace(corpus);
  const previous = await loadPreviousMap(ctx, plan, space, NARRATIVE_MAP);
  const previousThemes = await loadPreviousThemes(ctx, previous);
  const readText = textReader(ctx);
  const tPrev = performance.now() - t0 - tLoad;

  const all: Array<{
    n: BuiltNarrative;
    id: string;
    key: string;
    match: { id: string; cosine: number; overlap: number } | null;
    themeId: string;
  }> = [];
  const themes: NamedTheme[] = [];
  const perWindow: Record<string, unknown> = {};
  /** The uuids of the rows a narrative names (its first member, its representative). */
  const named = new Map<number, string>();
  const specs = rowWindows(corpus, bounds, WINDOW_KEYS);
  // An incremental run places the new posts into the served narratives (merge-models.ts), every
  // window's at once; a full run (or a window without served narratives) clusters anew.
  const tm = performance.now();
  const mergeable = specs.filter((spec) => plan.mode === 'incremental' && (previous?.byGroup.get(spec.key)?.length ?? 0) > 0);
  const mergedRanges = mergeWindows(
    corpus,
    mergeable.map((spec) => ({ firstRow: spec.firstRow, previous: previous!.byGroup.get(spec.key)! })),
    { ...CLUSTER_DEFAULTS, minClusterSize: STORY_DEFAULTS.minClusterSize, minClusterShare: STORY_DEFAULTS.minClusterShare },
    { words: storyWords(corpus), opts: STORY_DEFAULTS },
  );
  const mergedBy = new Map(mergeable.map((spec, i) => [spec.key, mergedRanges[i]!]));
  const mergeMs = performance.now() - tm;
  for (const spec of specs) {
    if (ctx.signal.aborted) throw new StageAborted('narratives');
    const w = spec.key;
    const prev = previous?.byGroup.get(w) ?? [];
    const tw = performance.now();
    const merged = mergedBy.get(w) ?? null;
    const built = await buildWindow(
      corpus,
      spec,
      ctx.asOf.getTime(),
      readText,
      STORY_DEFAULTS,
      prev.map((p) => p.centroid),
      merged ?? undefined,
    );
    const members = (n: BuiltNarrative) => ({ centroid: n.centroid, members: n.members });
    const matches = merged
      ? continued(built.narratives.map(members), merged.origin, prev)
      : matchClusters(built.narratives.map(members), prev);
    const tt = performance.now();
    const wt = await buildThemes(corpus, spec, built.narratives, ctx.asOf.getTime(), readText);
    const themeMs = performance.now() - tt;
    for (const [r, u] of await uuidsOf(
      ctx,
      [...built.narratives, ...wt.themes].flatMap((n) => (n.representative === null ? [n.members[0]!] : [n.members[0]!, n.representative])),
    ))
      named.set(r, u);
    const windowThemes = nameThemes(w, runTag, wt.themes, previousThemes.get(w) ?? [], (r) => named.get(r)!);
    themes.push(...windowThemes);
    built.narratives.forEach((n, i) => {
      const m = matches[i];
      const id = `${w}-${runTag}-${String(i + 1).padStart(3, '0')}`;
      const key = m ? prev[m.previous]!.key : newMapKey('nk', w, runTag, n.label, named.get(n.members[0]!)!);
      const match = m ? { id: prev[m.previous]!.id, cosine: m.cosine, overlap: m.overlap } : null;
      all.push({ n, id, key, match, themeId: windowThemes[wt.themeOf[i]!]!.id });
    });
    perWindow[w] = {
      rows: built.rows,
      k: built.k,
      warmStart: built.warmStart,
      silhouette: Number(built.silhouette.toFixed(3)),
      narratives: built.narratives.length,
      noise: built.noise,
      continued: matches.filter(Boolean).length,
      themes: wt.themes.length,
      themeSilhouette: Number(wt.grouping.silhouette.toFixed(3)),
      themesContinued: windowThemes.filter((t) => t.match).length,
      themeMs: Math.round(themeMs),
      ...(merged ? { newPosts: merged.placed } : {}),
      ms: Math.round(performance.now() - tw),
    };
  }

  const tWindows = performance.now();
  const narrativeRows = all.map(({ n, id, key, match, themeId }, i) => ({
    row_id: i,
    id,
    narrative_key: key,
    window_key: n.window.key,
    window_start: n.window.start,
    window_end: n.window.end,
    computed_at: computedAt,
    label: n.label,
    summary: n.summary,
    ...figureValues(n, n.representative === null ? null : named.get(n.representative)),
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
  }));
  await writeRowTable(ctx, 'narratives', NARRATIVE_COLUMNS, narrativeRows);
  await writeThemeTable(ctx, themes, computedAt, (r) => named.get(r));
  const centroids = new Float32Array(all.length * corpus.dim);
  all.forEach(({ n }, i) => centroids.set(n.centroid, i * corpus.dim));
  await writeFileAtomic(path.join(artifacts, 'narrative-centroids.f32'), new Uint8Array(centroids.buffer));

  await writeMemberTable(
    ctx,
    'narrative-members',
    { owner: 'narrative_id', group: 'window_key' },
    all.map(({ n, id }) => ({ owner: id, group: n.window.key, members: n.members, similarity: n.similarity })),
  );
  const memberCount = all.reduce((s, { n }) => s + n.members.length, 0);

  await writeTrajectory(
    ctx,
    'narrative-trajectory',
    TRAJECTORY_COLUMNS,
    previous,
    narrativeRows.map((r) => ({
      narrative_key: r.narrative_key,
      window_key: r.window_key,
      as_of: asOf,
      computed_at: computedAt,
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
    })),
  );
  // The map search reads these: row i is narratives.parquet row i.
  const text = await writeNarrativeText(
    artifacts,
    corpus,
    all.map(({ n }) => ({ label: n.label, summary: n.summary, topTags: n.topTags, members: n.members })),
  );
  await writeFileAtomic(path.join(artifacts, 'narratives-source.json'), JSON.stringify(source));
  return {
    narratives: all.length,
    themes: themes.length,
    members: memberCount,
    previousGeneration: previous?.generation ?? null,
    mode: plan.mode,
    windows: perWindow,
    loadMs: Math.round(tLoad),
    previousMs: Math.round(tPrev),
    mergeMs: Math.round(mergeMs),
    text,
    writeMs: Math.round(performance.now() - tWindows),
    ms: Math.round(performance.now() - t0),
  };
}

export const narrativesStage: Stage = {
  name: 'narratives',
  description: "cluster each window's posts into narratives: labels, momentum, lifecycle, sentiment, keys tracked across generations",
  run: runNarratives,
};
