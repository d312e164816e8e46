// The visual patterns of one scope: clusters of the scope's posts on their visual vectors
// (the narratives' clustering, core/clustering/kmeans-by-silhouette.ts, with the options below) described by every
// field of the PatternDetail (docs/api.md, "Pattern entry") that does not depend on the generation or a query. Field
// definitions: docs/fields.md ("Patterns").
import { clusterRange, type ClusteredRange, type ClusterOptions, CLUSTER_DEFAULTS } from '../../core/clustering/kmeans-by-silhouette.ts';
import { ClassCounts } from '../../core/maps/labels.ts';
import { dot } from '../../core/vectors/dot.ts';
import { memberStats, mostCentralFirst, representativeOf } from '../../core/maps/members.ts';
import type { BuiltWindow } from '../maps/map-stage.ts';
import type { RowWindow } from '../maps/post-columns.ts';
import { parseElement, type ElementType, type PatternCorpus } from './corpus.ts';

/** A scope: one of the windows (7d, 30d, 90d, all), from its first row on. */
type ScopeSpec = RowWindow;

// Visual vectors are non-negative in most of their blocks, so even unrelated pictures have a
// cosine well above 0: a post is noise below 0.85 to its centroid (the text clustering uses 0.3),
// a pattern needs 10 posts (0.2% of the scope when larger), and k is the one with the best
// silhouette (no parsimony): two formats that share a shape but not a palette are two patterns,
// and the coarser clustering within the tolerance merges them; the final k-means keeps the tightest
// of 8 seedings, and the bisecting refinement (kmeans-by-silhouette.ts) splits what it still merged.
export const PATTERN_CLUSTER: ClusterOptions = {
  ...CLUSTER_DEFAULTS,
  noiseSimilarity: 0.85,
  minClusterSize: 10,
  kMin: 2,
  silhouetteTolerance: 0,
  kPenalty: 0,
  restarts: 8,
};

/** Recurrent: carried by at least this share of the members. */
const RECURRENT_MIN_SUPPORT = 0.25;
const RECURRENT_MAX = 12;
/** A tag carried by at least this share of the members names the pattern. */
const TAG_LABEL_SUPPORT = 0.5;
const MEDOIDS = 3;
const REPRESENTATIVES = 5;
/** Tags compared between lookalikes: each pattern's most carried ones. */
const PATTERN_TAGS = 20;

export interface RecurrentElement {
  type: ElementType;
  value: string;
  support: number;
}

export interface BuiltPattern {
  scope: ScopeSpec;
  /** Member rows, most central first, and their cosine to the centroid. */
  members: number[];
  similarity: number[];
  centroid: Float32Array;
  medoids: number[];
  representatives: number[];
  label: string;
  labelSource: 'tag' | 'visual-elements';
  summary: string;
  recurrentElements: RecurrentElement[];
  /** The members' most carried tags (at least two members each), most carried first. */
  tags: string[];
  contentCount: number;
  creatorCount: number;
  platformCount: number;
  totalEngagement: number;
  earlyCount: number;
  lateCount: number;
  lateShare: number | null;
  firstSeenAt: string;
  confidence: number;
  tagAttachedMembers: number;
}

type ScopeResult = BuiltWindow<BuiltPattern>;

/** Elements of the members by share of members carrying them, most supported first (ties by name). */
export function recurrentElements(
  corpus: PatternCorpus,
  members: readonly number[],
  minSupport = RECURRENT_MIN_SUPPORT,
  max = RECURRENT_MAX,
): RecurrentElement[] {
  const counts = new Map<string, number>();
  for (const r of members) for (const e of corpus.elements.get(r)) counts.set(e, (counts.get(e) ?? 0) + 1);
  return [...counts]
    .map(([e, n]) => ({ e, support: n / members.length }))
    .filter((x) => x.support >= minSupport)
    .sort((a, b) => b.support - a.support || (a.e < b.e ? -1 : 1))
    .slice(0, max)
    .map(({ e, support }) => ({ ...parseElement(e), support }));
}

const COLOUR_WORDS = 2;

/** "orange and navy, geometric, centered": the pattern's most distinctive colours, style and layout. */
export function elementsLabel(distinctive: Array<{ key: string }>): string {
  const of = (t: ElementType) =>
    distinctive
      .map((d) => parseElement(d.key))
      .filter((e) => e.type === t)
      .map((e) => e.value);
  const parts: string[] = [];
  const colours = of('color').slice(0, COLOUR_WORDS);
  if (colours.length) parts.push(colours.join(' and '));
  const style = of('style')[0];
  if (style) parts.push(style);
  const layout = of('layout')[0];
  if (layout) parts.push(layout);
  const motion = of('motion')[0];
  if (motion) parts.push(`${motion} motion`);
  return parts.join(', ');
}

const isVisual = (k: string) => /^(color|style|layout|motion):/.test(k);

export function buildScope(
  corpus: PatternCorpus,
  scope: ScopeSpec,
  asOfMs: number,
  opts: ClusterOptions = PATTERN_CLUSTER,
  prior?: readonly Float32Array[],
  /** The scope's clusters when already made (an incremental run's, core/clustering/merge-models.ts). */
  given?: ClusteredRange,
): ScopeResult {
  const { dim, vectors } = corpus;
  const { rows, clustering: cl, clusters, byCluster } = given ?? clusterRange(vectors, dim, corpus.hasVector, scope.firstRow, opts, prior);
  const keptCentroids = clusters.map((c) => cl.centroids.subarray(c * dim, (c + 1) * dim));
  // Distinctive elements by c-TF-IDF over the scope's patterns: what sets a pattern apart (a white
  // background every pattern shares is recurrent, but does not name one).
  const elementCounts = new ClassCounts(clusters.length);
  clusters.forEach((c, ci) => {
    for (const i of byCluster.get(c)!) elementCounts.add(ci, corpus.elements.get(rows[i]!));
  });
  const patterns = clusters.map((c, ci): BuiltPattern => {
    // Rows ascend with positions, so ties go to the older row.
    const idx = Array.from(mostCentralFirst(byCluster.get(c)!, cl.similarity));
    const members = idx.map((i) => rows[i]!);
    const similarity = idx.map((i) => cl.similarity[i]!);
    const distinctive = elementCounts.top(ci, 12, isVisual);
    return {
      ...describePattern(corpus, scope, asOfMs, members, distinctive),
      similarity,
      centroid: cl.centroids.slice(c * dim, (c + 1) * dim),
      confidence: confidenceOf(corpus, members, similarity, keptCentroids, ci),
    };
  });
  const noise = cl.assignment.reduce((a, c) => a + (c < 0 ? 1 : 0), 0);
  return { clusters: patterns, k: cl.k, silhouette: cl.silhouette, rows: rows.length, noise, warmStart: cl.warmStart };
}

/**
 * Confidence: how clearly members belong to their pattern (`own`, of the kept centroids) rather
 * than to the next-nearest one, the mean over members of (own - next) / (1 - next), clamped to [0, 1].
 */
function confidenceOf(
  corpus: PatternCorpus,
  members: readonly number[],
  similarity: readonly number[],
  keptCentroids: readonly Float32Array[],
  own: number,
): number {
  const { dim, vectors } = corpus;
  let margin = 0;
  members.forEach((r, m) => {
    let next = -1;
    keptCentroids.forEach((cc, cj) => {
      if (cj !== own) next = Math.max(next, dot(vectors, r * dim, cc, 0, dim));
    });
    const mine = similarity[m]!;
    margin += keptCentroids.length < 2 ? mine : Math.min(1, Math.max(0, (mine - next) / Math.max(1e-9, 1 - next)));
  });
  return members.length ? margin / members.length : 0;
}

/** The members' posts in the scope's first and second half, and the first one's time. */
function earlyLate(corpus: PatternCorpus, scope: ScopeSpec, asOfMs: number, members: readonly number[]) {
  const startMs = Date.parse(scope.start);
  const midMs = startMs + (asOfMs - startMs) / 2;
  let early = 0;
  let late = 0;
  let first = Infinity;
  for (const r of members) {
    const t = corpus.publishedAt[r]!;
    first = Math.min(first, t);
    if (t >= startMs && t < midMs) early++;
    else if (t >= midMs) late++;
  }
  return { early, late, firstSeenAt: new Date(first).toISOString() };
}

/** The members' most carried tags (at least two members each), most carried first (ties by name). */
function memberTags(corpus: PatternCorpus, members: readonly number[]): string[] {
  const tagCounts = new Map<string, number>();
  for (const r of members) for (const t of new Set(corpus.tags[r])) tagCounts.set(t, (tagCounts.get(t) ?? 0) + 1);
  return [...tagCounts]
    .filter(([, n]) => n >= 2)
    .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
    .slice(0, PATTERN_TAGS)
    .map(([t]) => t);
}

/** Every field of a pattern that its members (most central first) and its distinctive elements give. */
function describePattern(
  corpus: PatternCorpus,
  scope: ScopeSpec,
  asOfMs: number,
  members: number[],
  distinctive: Array<{ key: string }>,
): Omit<BuiltPattern, 'similarity' | 'centroid' | 'confidence'> {
  const { creators, platforms, interactions } = memberStats(corpus, members);
  const { early, late, firstSeenAt } = earlyLate(corpus, scope, asOfMs, members);
  const recurrent = recurrentElements(corpus, members);
  const recurrentTags = new Set(recurrent.filter((e) => e.type === 'tag').map((e) => e.value));
  const tagAttachedMembers = members.filter((r) => corpus.tags[r]!.some((t) => recurrentTags.has(t))).length;

  const visualLabel = elementsLabel(distinctive) || 'mixed imagery';
  const topTag = recurrent.find((e) => e.type === 'tag' && e.support >= TAG_LABEL_SUPPORT);
  // Medoids: with unit vectors, the member nearest the members' mean minimises the summed
  // squared distance to all members; the most central members are the medoid and its runners-up.
  const representative = representativeOf(corpus, members);
  return {
    scope,
    members,
    medoids: members.slice(0, MEDOIDS),
    representatives: [representative, ...members.filter((r) => r !== representative).slice(0, REPRESENTATIVES - 1)],
    label: topTag ? `#${topTag.value}: ${visualLabel}` : visualLabel,
    labelSource: topTag ? 'tag' : 'visual-elements',
    summary: patternSummary(members.length, creators, platforms.size, firstSeenAt, visualLabel, recurrentTags),
    recurrentElements: recurrent,
    tags: memberTags(corpus, members),
    contentCount: members.length,
    creatorCount: creators,
    platformCount: platforms.size,
    totalEngagement: interactions,
    earlyCount: early,
    lateCount: late,
    lateShare: early + late ? late / (early + late) : null,
    firstSeenAt,
    tagAttachedMembers,
  };
}

/** "12 posts by 3 creators on 2 platforms since 2026-10-02 share a navy, geometric look, tagged #a #b." */
function patternSummary(
  posts: number,
  creators: number,
  platforms: number,
  firstSeenAt: string,
  visualLabel: string,
  recurrentTags: ReadonlySet<string>,
): string {
  const tagged = recurrentTags.size
    ? `, tagged ${[...recurrentTags]
        .slice(0, 3)
        .map((t) => `#${t}`)
        .join(' ')}`
    : '';
  return (
    `${posts} posts by ${creators} creator${creators === 1 ? '' : 's'} on ${platforms} platform${platforms === 1 ? '' : 's'}` +
    ` since ${firstSeenAt.slice(0, 10)} share ${visualLabel === 'mixed imagery' ? 'no single visual format' : `a ${visualLabel} look`}${tagged}.`
  );
}
