// The narrative and pattern maps of a generation, loaded once for serving: every narrative as its
// narrative object (docs/api.md, "Narrative") (source "tracked"), every pattern as its PatternDetail, with members
// (snapshot rows, most central first), trajectories, lookalikes, representative content, and the
// map search's two fields (narrative-rank.ts). Small next to the content: a few thousand
// entries at most.
import fs from 'node:fs/promises';
import { pathExists } from '../../core/infra/durable-fs.ts';
import path from 'node:path';
import { terms } from '../../core/text/analyzer.ts';
import { loadBm25, type Bm25Index } from '../../core/ranking/bm25.ts';
import { openDuckDB, sqlString, type Row } from '../../core/infra/duckdb.ts';
import { loadThemes, type ThemeMaps } from './load-themes.ts';
import { centralRowsOf, countFields, json, num, numOrNull, seriesFields, windowFields } from './map-rows.ts';
import { CENTRAL_POSTS } from '../../core/maps/central-posts.ts';
import type {
  EarlierNarrativeId,
  LoadedNarrative,
  LoadedPattern,
  Narrative,
  PatternDetail,
  RecurrentElement,
  TrajectoryPoint,
} from './map-types.ts';

// The maps' shapes (map-types.ts, apart so load-themes.ts can name them without a loop back here).
export type {
  EarlierNarrativeId,
  LoadedNarrative,
  LoadedPattern,
  Lookalike,
  Narrative,
  PatternDetail,
  RecurrentElement,
  RepresentativeContent,
  TrajectoryPoint,
} from './map-types.ts';

export interface Maps extends ThemeMaps {
  narratives: LoadedNarrative[];
  narrativeById: Map<string, LoadedNarrative>;
  /** The current narrative of each stable key (narrative_key). */
  narrativeByKey: Map<string, LoadedNarrative>;
  /** Ids of earlier generations in the trajectory history, with the key they belonged to. */
  earlierNarrativeIds: Map<string, EarlierNarrativeId>;
  /** Every story's points in the trajectory history, by narrative_key, ended stories included. */
  narrativeHistory: Map<string, { window_key: string; points: TrajectoryPoint[] }>;
  /** The map search's headline field: each narrative's label, summary, top tags and their words (narrative-text.bin). */
  narrativeText: Bm25Index | null;
  /** Its member field: how many posts of each narrative hold its most distinctive terms (narrative-member-terms.bin). */
  narrativeMemberTerms: Bm25Index | null;
  patterns: LoadedPattern[];
  patternByKey: Map<string, LoadedPattern>;
  /** Keys in the pattern trajectory history with no pattern in this generation (ended or merged). */
  endedPatternKeys: Set<string>;
  /** Dimension of the visual vectors and pattern centroids (0 without patterns). */
  patternDim: number;
}

/** A trajectory row as the API shows it; this generation's own rows carry no generation name yet (publish gives it). */
function trajectoryPoint(h: Row, generation: string): TrajectoryPoint {
  return {
    generation: (h.generation as string | null) ?? generation,
    as_of: h.as_of as string,
    computed_at: h.computed_at as string,
    narrative_id: h.narrative_id as string,
    content_count: num(h.content_count),
    creator_count: num(h.creator_count),
    total_engagement: String(Math.round(num(h.total_engagement))),
    velocity: numOrNull(h.velocity),
    acceleration: numOrNull(h.acceleration),
    momentum_score: num(h.momentum_score),
    emerging_score: num(h.emerging_score),
    lifecycle: (h.lifecycle as string | null) ?? null,
    sentiment_score: numOrNull(h.sentiment_score),
  };
}

function groupRows(rows: Row[], key: string): Map<string, Row[]> {
  const out = new Map<string, Row[]>();
  for (const r of rows) {
    const k = r[key] as string;
    const list = out.get(k);
    if (list) list.push(r);
    else out.set(k, [r]);
  }
  return out;
}

type Db = Awaited<ReturnType<typeof openDuckDB>>;

/** Members of each owner as snapshot rows, by rank (most central first). */
async function membersOf(db: Db, file: string, owner: string): Promise<Map<string, Int32Array>> {
  const res = await db.all<{ owner: string; rows: number[] }>(`SELECT ${owner} AS owner, list(post_row ORDER BY rank) AS rows
    FROM read_parquet(${sqlString(file)}) GROUP BY ${owner}`);
  return new Map(res.map((r) => [r.owner, Int32Array.from(r.rows, Number)]));
}

const emptyMaps = (): Maps => ({
  narratives: [],
  narrativeById: new Map(),
  narrativeByKey: new Map(),
  earlierNarrativeIds: new Map(),
  narrativeHistory: new Map(),
  narrativeText: null,
  narrativeMemberTerms: null,
  themes: [],
  themeById: new Map(),
  themeByKey: new Map(),
  patterns: [],
  patternByKey: new Map(),
  endedPatternKeys: new Set(),
  patternDim: 0,
});

/** A file of the generation's folder. */
type GenFile = (name: string) => string;

export async function loadMaps(generationDir: string, generation: string): Promise<Maps> {
  const file: GenFile = (n) => path.join(generationDir, n);
  const maps = emptyMaps();
  const db = await openDuckDB();
  try {
    await db.run(`SET TimeZone = 'UTC'`);
    if (await pathExists(file('narratives.parquet'))) await loadNarratives(db, file, generation, maps);
    if (await pathExists(file('patterns.parquet'))) await loadPatterns(db, file, generation, maps);
  } finally {
    db.close();
  }
  return maps;
}

/** The tracked narratives with their members, trajectories and centroids; the ids of earlier generations; themes; the map search's fields. */
async function loadNarratives(db: Db, file: GenFile, generation: string, maps: Maps): Promise<void> {
  const rows = await db.all(`SELECT * FROM read_parquet(${sqlString(file('narratives.parquet'))}) ORDER BY row_id`);
  const members = await membersOf(db, file('narrative-members.parquet'), 'narrative_id');
  const central = await centralRowsOf(db, file('narratives.parquet'), file('narrative-members.parquet'));
  const history = groupRows(
    await db.all(`SELECT * FROM read_parquet(${sqlString(file('narrative-trajectory.parquet'))}) ORDER BY row_id`),
    'narrative_key',
  );
  for (const [key, rows] of history)
    maps.narrativeHistory.set(key, {
      window_key: rows[0]!.window_key as string,
      points: rows.map((h) => trajectoryPoint(h, generation)),
    });
  const centroids = (await pathExists(file('narrative-centroids.f32')))
    ? new Float32Array(new Uint8Array(await fs.readFile(file('narrative-centroids.f32'))).buffer)
    : new Float32Array(0);
  const dim = rows.length ? Math.floor(centroids.length / rows.length) : 0;
  for (const r of rows) {
    const loaded = loadedNarrative(r, { members, central }, maps.narrativeHistory, centroids, dim);
    maps.narratives.push(loaded);
    maps.narrativeById.set(loaded.narrative.id, loaded);
    if (loaded.narrative.narrative_key) maps.narrativeByKey.set(loaded.narrative.narrative_key, loaded);
  }
  for (const [key, rows] of history) {
    for (const h of rows) {
      const id = h.narrative_id as string | null;
      if (id && !maps.narrativeById.has(id))
        maps.earlierNarrativeIds.set(id, {
          narrative_key: key,
          generation: (h.generation as string | null) ?? generation,
          window_key: h.window_key as string,
        });
    }
  }
  Object.assign(maps, await loadThemes(db, file('themes.parquet'), file('narrative-members.parquet'), maps.narratives));
  if (await pathExists(file('narrative-text.bin'))) maps.narrativeText = await loadBm25(file('narrative-text.bin'));
  // Absent in generations published before it existed: their search reads the headline alone.
  if (await pathExists(file('narrative-member-terms.bin'))) maps.narrativeMemberTerms = await loadBm25(file('narrative-member-terms.bin'));
}

/** One narrative row as it is served, with its members and central posts (null: a table without them), its trajectory and its centroid. */
function loadedNarrative(
  r: Row,
  rowsOf: { members: Map<string, Int32Array>; central: Map<string, Int32Array> | null },
  history: Maps['narrativeHistory'],
  centroids: Float32Array,
  dim: number,
): LoadedNarrative {
  const narrative: Narrative = {
    id: r.id as string,
    label: r.label as string,
    summary: r.summary as string,
    source: 'tracked',
    ...windowFields(r),
    ...countFields(r),
    top_tags: (r.top_tags as string[] | null) ?? [],
    score_breakdown: json<Record<string, unknown>>(r.score_breakdown) ?? {},
    narrative_key: (r.narrative_key as string | null) ?? null,
    ...seriesFields(r),
    theme_id: (r.theme_id as string | null | undefined) ?? null,
  };
  const trajectory = history.get(narrative.narrative_key ?? '')?.points ?? [];
  const members = rowsOf.members.get(narrative.id) ?? new Int32Array(0);
  return {
    narrative,
    members,
    central: rowsOf.central ? (rowsOf.central.get(narrative.id) ?? new Int32Array(0)) : members.subarray(0, CENTRAL_POSTS),
    dailyCounts: ((r.daily_counts as number[] | null) ?? []).map(Number),
    trajectory,
    centroid: dim && r.centroid_index !== null ? centroids.slice(num(r.centroid_index) * dim, (num(r.centroid_index) + 1) * dim) : null,
  };
}

/** The patterns with their members, lookalikes, representatives, trajectories and centroids. */
async function loadPatterns(db: Db, file: GenFile, generation: string, maps: Maps): Promise<void> {
  const rows = await db.all(`SELECT * FROM read_parquet(${sqlString(file('patterns.parquet'))}) ORDER BY row_id`);
  const members = await membersOf(db, file('pattern-members.parquet'), 'pattern_key');
  const looks = groupRows(
    await db.all(`SELECT * FROM read_parquet(${sqlString(file('pattern-lookalikes.parquet'))}) ORDER BY pattern_key, rank`),
    'pattern_key',
  );
  const reps = groupRows(
    await db.all(`SELECT * FROM read_parquet(${sqlString(file('pattern-representatives.parquet'))}) ORDER BY pattern_key, rank`),
    'pattern_key',
  );
  const history = groupRows(
    await db.all(`SELECT * FROM read_parquet(${sqlString(file('pattern-trajectory.parquet'))}) ORDER BY row_id`),
    'pattern_key',
  );
  const raw = (await pathExists(file('pattern-centroids.f32'))) ? await fs.readFile(file('pattern-centroids.f32')) : Buffer.alloc(0);
  const flat = new Float32Array(raw.buffer, raw.byteOffset, raw.byteLength / 4);
  maps.patternDim = rows.length ? flat.length / rows.length : 0;
  for (const r of rows) {
    const loaded = loadedPattern(r, { members, looks, reps, history, flat, dim: maps.patternDim, generation });
    maps.patterns.push(loaded);
    maps.patternByKey.set(loaded.detail.patternKey, loaded);
  }
  for (const key of history.keys()) if (!maps.patternByKey.has(key)) maps.endedPatternKeys.add(key);
}

/** What a pattern row is served with: its rows of the other pattern files by pattern_key, and the centroids. */
interface PatternParts {
  members: Map<string, Int32Array>;
  looks: Map<string, Row[]>;
  reps: Map<string, Row[]>;
  history: Map<string, Row[]>;
  flat: Float32Array;
  dim: number;
  generation: string;
}

function loadedPattern(r: Row, p: PatternParts): LoadedPattern {
  const key = r.pattern_key as string;
  const detail = patternDetail(r, p.history.get(key) ?? [], p.generation);
  return {
    scope: r.scope_key as string,
    detail,
    members: p.members.get(key) ?? new Int32Array(0),
    tags: (r.tags as string[] | null) ?? [],
    text: terms([detail.label, detail.summary ?? '', ...detail.recurrentElements.map((e) => e.value)].join(' ')),
    centroid:
      p.dim && r.centroid_index !== null && r.centroid_index !== undefined
        ? p.flat.slice(num(r.centroid_index) * p.dim, (num(r.centroid_index) + 1) * p.dim)
        : null,
    lookalikes: (p.looks.get(key) ?? []).map((l) => ({
      centroidCosine: num(l.centroid_cosine),
      corroborationCount: num(l.corroboration_count),
      label: l.label as string,
      patternKey: l.lookalike_key as string,
      tagJaccard: num(l.tag_jaccard),
      sharedElements: json(l.shared_elements) ?? {},
    })),
    representatives: (p.reps.get(key) ?? []).map((x) => ({
      contentUuid: x.content_uuid as string,
      isRepresentative: Boolean(x.is_representative),
      engagement: num(x.engagement),
      centroidSimilarity: numOrNull(x.centroid_similarity),
      contentUrl: (x.content_url as string | null) ?? null,
      description: (x.description as string | null) ?? null,
      platform: (x.platform as string | null) ?? null,
      publishedAt: (x.published_at as string | null) ?? null,
      title: (x.title as string | null) ?? null,
    })),
  };
}

/** A pattern row's detail, as GET /patterns/{key} shows it. */
function patternDetail(r: Row, history: Row[], generation: string): PatternDetail {
  const key = r.pattern_key as string;
  return {
    clusteringMethod: r.clustering_method as string,
    confidence: num(r.confidence),
    contentCount: num(r.content_count),
    creatorCount: num(r.creator_count),
    earlyCount: num(r.early_count),
    lateCount: num(r.late_count),
    lateShare: numOrNull(r.late_share),
    firstSeenAt: r.first_seen_at as string,
    generation,
    label: r.label as string,
    labelSource: r.label_source as string,
    medoidContentUuids: (r.medoid_content_uuids as string[] | null) ?? [],
    patternKey: key,
    platformCount: num(r.platform_count),
    reconciliation: json(r.reconciliation),
    recurrentElements: json<RecurrentElement[]>(r.recurrent_elements) ?? [],
    scopeDays: num(r.scope_days),
    summary: (r.summary as string | null) ?? null,
    tagAttachedMembers: num(r.tag_attached_members),
    totalEngagement: num(r.total_engagement),
    trajectory: history.map((h) => ({
      contentCount: num(h.content_count),
      creatorCount: num(h.creator_count),
      generation: (h.generation as string | null) ?? generation,
    })),
  };
}
