// The patterns stage: per scope (the windows 7d, 30d, 90d and all), clusters of the scope's posts
// on their visual vectors with every field of the PatternDetail (docs/api.md, "Pattern entry") (build.ts), lookalikes
// (lookalikes.ts), representative content, keys carried over from the served generation
// (reconciliation) and their history; the flow is the map stages' skeleton (map-stage.ts), with the
// steps below. Outputs, in artifacts/:
//   patterns.parquet                 one row per pattern (columns in docs/snapshot-tables.md)
//   pattern-members.parquet          pattern_key, scope_key, post_row, uuid, similarity, rank
//   pattern-lookalikes.parquet       pattern_key, rank, the lookalike's key and label, evidence
//   pattern-representatives.parquet  pattern_key, rank, the content fields of a pattern entry's representativeContent
//   pattern-trajectory.parquet       per pattern_key, its counts in every generation kept
//   pattern-centroids.f32            patterns x dim float32, in patterns.parquet order
import path from 'node:path';
import { writeFileAtomic } from '../../core/infra/durable-fs.ts';
import { DAY_MS } from '../../core/snapshots/windows.ts';
import type { MatchThresholds } from '../../core/clustering/tracking.ts';
import { runMapStage, type MapRun, type MapStage, type MapWritten, type TrackedWindow } from '../maps/map-stage.ts';
import { mergeWindows, type MapFiles } from '../maps/previous-map.ts';
import { writeRowTable } from '../store/row-table.ts';
import { writeMemberTable } from '../maps/member-table.ts';
import type { Stage, StageContext } from '../context/stage-context.ts';
import { buildScope, PATTERN_CLUSTER, type BuiltPattern } from './build.ts';
import { loadPatternCorpus, type PatternCorpus } from './corpus.ts';
import { lookalikesOf } from './lookalikes.ts';

const CLUSTERING_METHOD = 'kmeans-cosine-visual';

// Visual centroids of different formats are still fairly close (non-negative colour blocks), so a
// pattern continues one of the previous generation only above a higher cosine than narratives need.
const PATTERN_MATCH: MatchThresholds = { cosine: 0.95, overlap: 0.5 };

export const PATTERN_COLUMNS = {
  row_id: 'BIGINT',
  pattern_key: 'VARCHAR',
  scope_key: 'VARCHAR',
  scope_start: 'VARCHAR',
  scope_end: 'VARCHAR',
  scope_days: 'DOUBLE',
  computed_at: 'VARCHAR',
  clustering_method: 'VARCHAR',
  label: 'VARCHAR',
  label_source: 'VARCHAR',
  summary: 'VARCHAR',
  confidence: 'DOUBLE',
  content_count: 'BIGINT',
  creator_count: 'BIGINT',
  platform_count: 'BIGINT',
  total_engagement: 'DOUBLE',
  early_count: 'BIGINT',
  late_count: 'BIGINT',
  late_share: 'DOUBLE',
  first_seen_at: 'VARCHAR',
  medoid_content_uuids: 'VARCHAR[]',
  recurrent_elements: 'VARCHAR',
  tags: 'VARCHAR[]',
  tag_attached_members: 'BIGINT',
  reconciliation: 'VARCHAR',
  previous_key: 'VARCHAR',
  centroid_index: 'INTEGER',
} as const;

const LOOKALIKE_COLUMNS = {
  row_id: 'BIGINT',
  pattern_key: 'VARCHAR',
  rank: 'INTEGER',
  lookalike_key: 'VARCHAR',
  label: 'VARCHAR',
  centroid_cosine: 'DOUBLE',
  tag_jaccard: 'DOUBLE',
  corroboration_count: 'INTEGER',
  shared_elements: 'VARCHAR',
} as const;

const REPRESENTATIVE_COLUMNS = {
  row_id: 'BIGINT',
  pattern_key: 'VARCHAR',
  rank: 'INTEGER',
  content_uuid: 'VARCHAR',
  is_representative: 'BOOLEAN',
  engagement: 'DOUBLE',
  centroid_similarity: 'DOUBLE',
  content_url: 'VARCHAR',
  description: 'VARCHAR',
  platform: 'VARCHAR',
  published_at: 'VARCHAR',
  title: 'VARCHAR',
} as const;

const TRAJECTORY_COLUMNS = {
  row_id: 'BIGINT',
  pattern_key: 'VARCHAR',
  scope_key: 'VARCHAR',
  generation: 'VARCHAR',
  as_of: 'VARCHAR',
  computed_at: 'VARCHAR',
  content_count: 'BIGINT',
  creator_count: 'BIGINT',
} as const;

const PATTERN_MAP: MapFiles = {
  table: 'patterns.parquet',
  members: 'pattern-members.parquet',
  trajectory: 'pattern-trajectory.parquet',
  id: 'pattern_key',
  key: 'pattern_key',
  group: 'scope_key',
  memberOf: 'pattern_key',
};

interface ContentRow {
  row_id: number;
  content_url: string | null;
  description: string | null;
  title: string | null;
  platform: string;
  published_at: string;
}

/** The patterns stage's summary. */
type PatternsSummary = {
  patterns: number;
  members: number;
  previousGeneration: string | null;
  /** Each scope's figures, by its key. */
  scopes: Record<string, unknown>;
  ms: number;
};

/** The patterns' own steps in the map stages' skeleton (map-stage.ts). */
const PATTERNS_MAP: MapStage<PatternCorpus, BuiltPattern, PatternsSummary> = {
  name: 'patterns',
  files: PATTERN_MAP,
  trajectoryColumns: TRAJECTORY_COLUMNS,
  keyPrefix: 'pk',
  tagSeed: 'patterns\n',
  match: PATTERN_MATCH,
  missing: 'no visual features to build patterns from: run the features and index stages first',
  stale: (s, at) => `the features were built for as-of ${s.asOf}; run the features and index stages for ${at} first`,
  loadCorpus: loadPatternCorpus,
  merge: (corpus, windows) => mergeWindows(corpus, windows, PATTERN_CLUSTER),
  open: async (run) => ({
    build: async (spec, prior, merged) => buildScope(run.corpus, spec, run.ctx.asOf.getTime(), PATTERN_CLUSTER, prior, merged ?? undefined),
    write: (scopes) => writePatterns(run, scopes),
  }),
};

function runPatterns(ctx: StageContext): Promise<PatternsSummary> {
  return runMapStage(ctx, PATTERNS_MAP);
}

type Scope = TrackedWindow<BuiltPattern>;

/** Every scope's patterns into their tables and centroids; the trajectory's rows and the summary to the skeleton. */
async function writePatterns(run: MapRun<PatternCorpus>, scopes: Scope[]): Promise<MapWritten<PatternsSummary>> {
  const { ctx, corpus } = run;
  await run.name(scopes.flatMap((x) => x.built.clusters.flatMap((p) => [...p.medoids, ...p.representatives])));
  const patternRows = scopes.flatMap((scope) =>
    scope.built.clusters.map((p, i) => ({ p, key: scope.keys[i]!, rec: reconciliationOf(scope, i) })),
  );
  const rows = patternRows.map(({ p, key, rec }, i) => patternRow(run, p, key, rec, i));
  const members = patternRows.map(({ p, key }) => ({ owner: key, group: p.scope.key, members: p.members, similarity: p.similarity }));
  await writeRowTable(ctx, 'patterns', PATTERN_COLUMNS, rows);
  await writeMemberTable(ctx, 'pattern-members', { owner: 'pattern_key', group: 'scope_key' }, members);
  await writeRowTable(ctx, 'pattern-lookalikes', LOOKALIKE_COLUMNS, lookalikeRows(scopes));
  await writeRowTable(ctx, 'pattern-representatives', REPRESENTATIVE_COLUMNS, await withContent(ctx, representativeRows(run, scopes)));
  const flat = new Float32Array(patternRows.length * corpus.dim);
  patternRows.forEach(({ p }, i) => flat.set(p.centroid, i * corpus.dim));
  await writeFileAtomic(path.join(ctx.layout.artifacts, 'pattern-centroids.f32'), new Uint8Array(flat.buffer));
  return {
    trajectory: rows.map((r) => ({
      pattern_key: r.pattern_key,
      scope_key: r.scope_key,
      as_of: run.asOfIso,
      computed_at: run.computedAt,
      content_count: r.content_count,
      creator_count: r.creator_count,
    })),
    summary: (times, windows) => ({
      patterns: rows.length,
      members: members.reduce((s, m) => s + m.members.length, 0),
      previousGeneration: run.previous?.generation ?? null,
      scopes: windows,
      ms: times.ms,
    }),
  };
}

interface Reconciliation {
  cosine: number;
  memberOverlap: number | null;
  previousKey: string;
}

/** How the scope's pattern i continues a served one (null when new); no overlap when the served one kept no members. */
function reconciliationOf(scope: Scope, i: number): Reconciliation | null {
  const m = scope.matches[i];
  if (!m) return null;
  const prev = scope.previous[m.previous]!;
  return { cosine: m.cosine, memberOverlap: prev.members.length ? m.overlap : null, previousKey: prev.key };
}

/** One row of patterns.parquet. */
function patternRow(run: MapRun<PatternCorpus>, p: BuiltPattern, key: string, rec: Reconciliation | null, i: number) {
  return {
    row_id: i,
    pattern_key: key,
    scope_key: p.scope.key,
    scope_start: p.scope.start,
    scope_end: p.scope.end,
    scope_days: Math.round(((Date.parse(p.scope.end) - Date.parse(p.scope.start)) / DAY_MS) * 10) / 10,
    computed_at: run.computedAt,
    clustering_method: CLUSTERING_METHOD,
    label: p.label,
    label_source: p.labelSource,
    summary: p.summary,
    confidence: p.confidence,
    content_count: p.contentCount,
    creator_count: p.creatorCount,
    platform_count: p.platformCount,
    total_engagement: p.totalEngagement,
    early_count: p.earlyCount,
    late_count: p.lateCount,
    late_share: p.lateShare,
    first_seen_at: p.firstSeenAt,
    medoid_content_uuids: p.medoids.map((r) => run.named.get(r)!),
    recurrent_elements: JSON.stringify(p.recurrentElements),
    tags: p.tags,
    tag_attached_members: p.tagAttachedMembers,
    reconciliation: rec ? JSON.stringify({ cosine: rec.cosine, memberOverlap: rec.memberOverlap }) : null,
    previous_key: rec?.previousKey ?? null,
    centroid_index: i,
  };
}

/** Each pattern's lookalikes among its scope's patterns, pattern by pattern. */
function lookalikeRows(scopes: Scope[]): Array<Record<string, unknown>> {
  const rows = scopes.flatMap(({ built, keys }) =>
    built.clusters.flatMap((_, i) =>
      lookalikesOf(built.clusters, i).map((l, rank) => ({
        pattern_key: keys[i]!,
        rank: rank + 1,
        lookalike_key: keys[l.other],
        label: built.clusters[l.other]!.label,
        centroid_cosine: l.centroidCosine,
        tag_jaccard: l.tagJaccard,
        corroboration_count: l.corroborationCount,
        shared_elements: JSON.stringify(l.sharedElements),
      })),
    ),
  );
  return rows.map((r, i) => ({ row_id: i, ...r }));
}

interface Representative {
  row_id: number;
  pattern_key: string;
  rank: number;
  content_uuid: string | undefined;
  is_representative: boolean;
  engagement: number | undefined;
  centroid_similarity: number | null;
  /** The post's row and the pattern's summary: what withContent reads and falls back to. */
  post_row: number;
  summary: string;
}

/** Each pattern's representative content, pattern by pattern, the representative first. */
function representativeRows(run: MapRun<PatternCorpus>, scopes: Scope[]): Representative[] {
  const rows = scopes.flatMap(({ built, keys }) =>
    built.clusters.flatMap((p, i) =>
      p.representatives.map((r, rank) => ({
        pattern_key: keys[i]!,
        rank: rank + 1,
        content_uuid: run.named.get(r),
        is_representative: rank === 0,
        engagement: run.corpus.interactions[r],
        centroid_similarity: p.similarity[p.members.indexOf(r)] ?? null,
        post_row: r,
        summary: p.summary,
      })),
    ),
  );
  return rows.map((r, i) => ({ row_id: i, ...r }));
}

/**
 * Representative content carries the post's own fields. The description falls back to the
 * title, then to the pattern's summary: some platforms post pictures with no words at all.
 */
async function withContent(ctx: StageContext, representatives: Representative[]): Promise<Array<Record<string, unknown>>> {
  const db = await ctx.db();
  const wanted = [...new Set(representatives.map((r) => r.post_row))];
  const content = new Map<number, ContentRow>();
  for (let at = 0; at < wanted.length; at += 5000) {
    const res = await db.all<ContentRow & Record<string, unknown>>(`SELECT s.row_id, p.content_url, p.description, p.title, p.platform,
      strftime(p.published_at AT TIME ZONE 'UTC', '%Y-%m-%dT%H:%M:%S.%gZ') AS published_at
      FROM snap s JOIN posts p USING (uuid) WHERE s.row_id IN (${wanted.slice(at, at + 5000).join(',')})`);
    for (const r of res) content.set(Number(r.row_id), r);
  }
  const words = (s: string | null | undefined) => (s && s.trim() ? s : null);
  return representatives.map(({ post_row, summary, ...r }) => {
    const c = content.get(post_row);
    return {
      ...r,
      content_url: c?.content_url ?? null,
      description: words(c?.description) ?? words(c?.title) ?? summary,
      platform: c?.platform ?? null,
      published_at: c?.published_at ?? null,
      title: words(c?.title),
    };
  });
}

export const patternsStage: Stage<'patterns', PatternsSummary> = {
  name: 'patterns',
  description:
    "cluster each scope's visual vectors into patterns: recurrent elements, lookalikes, representative content, keys tracked across generations",
  run: runPatterns,
};
