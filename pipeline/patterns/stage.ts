// The patterns stage: per scope (the windows 7d, 30d, 90d and all), clusters of the scope's posts
// on their visual vectors with every field of the PatternDetail (docs/api.md, "Pattern entry") (build.ts), lookalikes
// (lookalikes.ts), representative content, keys carried over from the served generation
// (reconciliation) and their history. Outputs, in artifacts/:
//   patterns.parquet                 one row per pattern (columns in docs/snapshot-tables.md)
//   pattern-members.parquet          pattern_key, scope_key, post_row, uuid, similarity, rank
//   pattern-lookalikes.parquet       pattern_key, rank, the lookalike's key and label, evidence
//   pattern-representatives.parquet  pattern_key, rank, the content fields of a pattern entry's representativeContent
//   pattern-trajectory.parquet       per pattern_key, its counts in every generation kept
//   pattern-centroids.f32            patterns x dim float32, in patterns.parquet order
import { createHash } from 'node:crypto';
import path from 'node:path';
import { writeFileAtomic } from '../../core/infra/durable-fs.ts';
import { DAY_MS, WINDOW_KEYS, windowBounds } from '../../core/snapshots/windows.ts';
import { matchClusters, newMapKey, type MatchThresholds } from '../../core/clustering/tracking.ts';
import { rowWindows, uuidsOf } from '../post-columns.ts';
import { continued, currentSpace, loadPreviousMap, mergeWindows, writeTrajectory, type MapFiles } from '../previous-map.ts';
import { writeRowTable } from '../row-table.ts';
import { writeMemberTable, type MemberEntry } from '../member-table.ts';
import { readPlan } from '../segment-plan.ts';
import { requireArtifactSource, snapshotWhere } from '../snapshot-rows.ts';
import type { Stage, StageContext, StageSummary } from '../stage-context.ts';
import { StageAborted } from '../stage-context.ts';
import { buildScope, PATTERN_CLUSTER, type BuiltPattern } from './build.ts';
import { loadPatternCorpus } from './corpus.ts';
import { lookalikesOf } from './lookalikes.ts';

export const CLUSTERING_METHOD = 'kmeans-cosine-visual';

// Visual centroids of different formats are still fairly close (non-negative colour blocks), so a
// pattern continues one of the previous generation only above a higher cosine than narratives need.
export const PATTERN_MATCH: MatchThresholds = { cosine: 0.95, overlap: 0.5 };

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

export async function runPatterns(ctx: StageContext): Promise<StageSummary> {
  const t0 = performance.now();
  const { artifacts } = ctx.layout;
  const asOf = ctx.asOf.toISOString();
  const source = await requireArtifactSource(
    ctx,
    path.join(artifacts, 'source.json'),
    'no visual features to build patterns from: run the features and index stages first',
    (s, at) => `the features were built for as-of ${s.asOf}; run the features and index stages for ${at} first`,
  );
  const plan = await readPlan(ctx);
  const corpus = await loadPatternCorpus(ctx, plan);
  const db = await ctx.db();
  const [e] = await db.all<{ earliest: number | null }>(
    `SELECT epoch_ms(min(published_at))::DOUBLE AS earliest FROM posts WHERE ${snapshotWhere(asOf)}`,
  );
  const bounds = windowBounds(ctx.asOf, e?.earliest != null ? new Date(Number(e.earliest)) : null);
  const computedAt = new Date().toISOString();
  const runTag = createHash('sha256').update(`patterns\n${asOf}\n${source.ingestVersion}\n${computedAt}`).digest('hex').slice(0, 8);
  const space = currentSpace(corpus);
  const previous = await loadPreviousMap(ctx, plan, space, PATTERN_MAP);

  const scopes: Array<{
    built: BuiltPattern[];
    keys: string[];
    reconciliation: Array<{ cosine: number; memberOverlap: number | null; previousKey: string } | null>;
  }> = [];
  const perScope: Record<string, unknown> = {};
  for (const spec of rowWindows(corpus, bounds, WINDOW_KEYS)) {
    if (ctx.signal.aborted) throw new StageAborted('patterns');
    const w = spec.key;
    const prev = previous?.byGroup.get(w) ?? [];
    // An incremental run places the new posts into the served patterns (merge-models.ts); a full run clusters anew.
    const merged =
      plan.mode === 'incremental' && prev.length > 0
        ? mergeWindows(corpus, [{ firstRow: spec.firstRow, previous: prev }], PATTERN_CLUSTER)[0]!
        : null;
    const built = buildScope(
      corpus,
      spec,
      ctx.asOf.getTime(),
      PATTERN_CLUSTER,
      prev.map((p) => p.centroid),
      merged ?? undefined,
    );
    const sides = built.patterns.map((p) => ({ centroid: p.centroid, members: p.members }));
    const matches = merged ? continued(sides, merged.origin, prev) : matchClusters(sides, prev, PATTERN_MATCH);
    const firsts = await uuidsOf(
      ctx,
      built.patterns.map((p) => p.members[0]!),
    );
    const keys = built.patterns.map((p, i) => {
      const m = matches[i];
      return m ? prev[m.previous]!.key : newMapKey('pk', w, runTag, p.label, firsts.get(p.members[0]!)!);
    });
    scopes.push({
      built: built.patterns,
      keys,
      reconciliation: matches.map((m) =>
        m
          ? { cosine: m.cosine, memberOverlap: prev[m.previous]!.members.length ? m.overlap : null, previousKey: prev[m.previous]!.key }
          : null,
      ),
    });
    perScope[w] = {
      rows: built.rows,
      k: built.k,
      warmStart: built.warmStart,
      silhouette: Number(built.silhouette.toFixed(3)),
      patterns: built.patterns.length,
      noise: built.noise,
      continued: matches.filter(Boolean).length,
      ...(merged ? { newPosts: merged.placed } : {}),
    };
  }

  const patternRows: Array<Record<string, unknown>> = [];
  const members: MemberEntry[] = [];
  const lookalikes: unknown[] = [];
  const representatives: Array<Record<string, unknown>> = [];
  const centroids: Float32Array[] = [];
  const named = await uuidsOf(
    ctx,
    scopes.flatMap((x) => x.built.flatMap((p) => [...p.medoids, ...p.representatives])),
  );
  for (const { built, keys, reconciliation } of scopes) {
    built.forEach((p, i) => {
      const key = keys[i]!;
      const rec = reconciliation[i];
      patternRows.push({
        row_id: patternRows.length,
        pattern_key: key,
        scope_key: p.scope.key,
        scope_start: p.scope.start,
        scope_end: p.scope.end,
        scope_days: Math.round(((Date.parse(p.scope.end) - Date.parse(p.scope.start)) / DAY_MS) * 10) / 10,
        computed_at: computedAt,
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
        medoid_content_uuids: p.medoids.map((r) => named.get(r)!),
        recurrent_elements: JSON.stringify(p.recurrentElements),
        tags: p.tags,
        tag_attached_members: p.tagAttachedMembers,
        reconciliation: rec ? JSON.stringify({ cosine: rec.cosine, memberOverlap: rec.memberOverlap }) : null,
        previous_key: rec?.previousKey ?? null,
        centroid_index: centroids.length,
      });
      centroids.push(p.centroid);
      members.push({ owner: key, group: p.scope.key, members: p.members, similarity: p.similarity });
      lookalikesOf(built, i).forEach((l, rank) =>
        lookalikes.push({
          row_id: lookalikes.length,
          pattern_key: key,
          rank: rank + 1,
          lookalike_key: keys[l.other],
          label: built[l.other]!.label,
          centroid_cosine: l.centroidCosine,
          tag_jaccard: l.tagJaccard,
          corroboration_count: l.corroborationCount,
          shared_elements: JSON.stringify(l.sharedElements),
        }),
      );
      p.representatives.forEach((r, rank) =>
        representatives.push({
          row_id: representatives.length,
          pattern_key: key,
          rank: rank + 1,
          content_uuid: named.get(r),
          is_representative: rank === 0,
          engagement: corpus.interactions[r],
          centroid_similarity: p.similarity[p.members.indexOf(r)] ?? null,
          post_row: r,
          summary: p.summary,
        }),
      );
    });
  }

  // Representative content carries the post's own fields. The description falls back to the
  // title, then to the pattern's summary: some platforms post pictures with no words at all.
  const wanted = [...new Set(representatives.map((r) => r.post_row as number))];
  const content = new Map<number, ContentRow>();
  for (let at = 0; at < wanted.length; at += 5000) {
    const res = await db.all<ContentRow & Record<string, unknown>>(`SELECT s.row_id, p.content_url, p.description, p.title, p.platform,
      strftime(p.published_at AT TIME ZONE 'UTC', '%Y-%m-%dT%H:%M:%S.%gZ') AS published_at
      FROM snap s JOIN posts p USING (uuid) WHERE s.row_id IN (${wanted.slice(at, at + 5000).join(',')})`);
    for (const r of res) content.set(Number(r.row_id), r);
  }
  const repRows = representatives.map(({ post_row, summary, ...r }) => {
    const c = content.get(post_row as number);
    const words = (s: string | null | undefined) => (s && s.trim() ? s : null);
    return {
      ...r,
      content_url: c?.content_url ?? null,
      description: words(c?.description) ?? words(c?.title) ?? (summary as string),
      platform: c?.platform ?? null,
      published_at: c?.published_at ?? null,
      title: words(c?.title),
    };
  });

  await writeRowTable(ctx, 'patterns', PATTERN_COLUMNS, patternRows);
  await writeMemberTable(ctx, 'pattern-members', { owner: 'pattern_key', group: 'scope_key' }, members);
  await writeRowTable(ctx, 'pattern-lookalikes', LOOKALIKE_COLUMNS, lookalikes);
  await writeRowTable(ctx, 'pattern-representatives', REPRESENTATIVE_COLUMNS, repRows);
  const flat = new Float32Array(centroids.length * corpus.dim);
  centroids.forEach((c, i) => flat.set(c, i * corpus.dim));
  await writeFileAtomic(path.join(artifacts, 'pattern-centroids.f32'), new Uint8Array(flat.buffer));

  await writeTrajectory(
    ctx,
    'pattern-trajectory',
    TRAJECTORY_COLUMNS,
    previous,
    patternRows.map((r) => ({
      pattern_key: r.pattern_key,
      scope_key: r.scope_key,
      as_of: asOf,
      computed_at: computedAt,
      content_count: r.content_count,
      creator_count: r.creator_count,
    })),
  );
  await writeFileAtomic(path.join(artifacts, 'patterns-source.json'), JSON.stringify(source));
  return {
    patterns: patternRows.length,
    members: members.reduce((s, m) => s + m.members.length, 0),
    previousGeneration: previous?.generation ?? null,
    scopes: perScope,
    ms: Math.round(performance.now() - t0),
  };
}

export const patternsStage: Stage = {
  name: 'patterns',
  description:
    "cluster each scope's visual vectors into patterns: recurrent elements, lookalikes, representative content, keys tracked across generations",
  run: runPatterns,
};
