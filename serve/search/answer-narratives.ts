// The `narratives` of a search answer (docs/api.md, "POST /search"):
//   tracked   the generation's narratives of the search window whose overlap with the returned
//             rows passes an exact hypergeometric test (upper tail) under Benjamini-Hochberg false
//             discovery control at 5% over every narrative of the window; memberOverlap and
//             overlap_count = returned rows that are members, overlapZScore ranks them;
//   emergent  clusters of the returned rows themselves (their text vectors, the narratives'
//             k-means with settings for a few hundred rows: answer-clusters.ts), described like tracked ones, with
//             queryRelevance = the members' mean cosine to the query (0..1). Their ids stay
//             readable at /narratives/{id} for EMERGENT_TTL_MS (emergent-store.ts), where their central posts
//             are picked (emergentCentral).
import { createHash } from 'node:crypto';
import { terms, termsAndSurfaces, termSurfaces } from '../../core/text/analyzer.ts';
import type { RankedRow } from '../../core/ranking/search.ts';
import { benjaminiHochberg, hypergeometricUpperTail, hypergeometricZ } from '../../core/stats/hypergeometric.ts';
import type { WindowKey } from '../../core/snapshots/windows.ts';
import { DESCRIBE_POSTS, platformDiffusion, postReadable, postWords, type PostWords } from '../../core/maps/label-and-summary.ts';
import { ClusterDescriber, LABEL_CANDIDATES } from '../../core/maps/cluster-describer.ts';
import { LABEL_DEFAULTS, labelKeys } from '../../core/maps/labels.ts';
import { labelText } from '../../core/maps/row-label-words.ts';
import { narrativeSentiment } from '../../core/maps/sentiment.ts';
import { seriesStats } from '../../core/maps/series.ts';
import { memberStats } from '../../core/maps/members.ts';
import { centralPosts, flaggedShare } from '../../core/maps/central-posts.ts';
import { flaggedPost } from '../../core/text/abuse.ts';
import type { AnswerClusters } from './answer-clusters.ts';
import { KeyCounter, keyListsOf, LabelVocabulary } from '../../core/maps/label-counts.ts';
import { windowDaysOf, type GenerationData } from '../generation/loaded-generation.ts';
import type { LoadedNarrative, Narrative } from '../generation/load-maps.ts';

const TRACKED_FDR = 0.05;

type TrackedInAnswer = Narrative & { memberOverlap: number; overlapZScore: number; overlap_count: number };
type EmergentInAnswer = Narrative & { queryRelevance: number };
export interface EmergentNarrative {
  narrative: EmergentInAnswer;
  members: Int32Array;
  dailyCounts: number[];
}

/** Tracked narratives of `window` that the returned rows over-represent, by overlapZScore. */
export function trackedNarratives(gen: GenerationData, window: WindowKey, rows: readonly number[]): TrackedInAnswer[] {
  const inWindow = gen.maps.narratives.filter((n) => n.narrative.window_key === window);
  if (inWindow.length === 0 || rows.length === 0) return [];
  const overlap = new Map<string, number>();
  for (const r of rows) for (const id of gen.content.narrativeIds.get(r)) overlap.set(id, (overlap.get(id) ?? 0) + 1);
  // Population: the window's rows that can be members at all (those with a text vector).
  const N = gen.vectorRowsFrom(gen.index.windowStart[window]);
  const n = rows.length;
  const tested = inWindow.map((ln) => {
    const k = overlap.get(ln.narrative.id) ?? 0;
    const K = ln.members.length;
    return { ln, k, p: k === 0 ? 1 : hypergeometricUpperTail(N, K, n, k), z: hypergeometricZ(N, K, n, k) };
  });
  const pass = benjaminiHochberg(
    tested.map((t) => t.p),
    TRACKED_FDR,
  );
  return tested
    .filter((t, i) => pass[i] && t.k > 0)
    .sort((a, b) => b.z - a.z || a.ln.narrative.id.localeCompare(b.ln.narrative.id))
    .map(({ ln, k, z }) => ({ ...ln.narrative, memberOverlap: k, overlapZScore: z, overlap_count: k }));
}

/** Rows whose words are remembered per generation (a few tens of MB at most). */
const LABEL_KEY_CACHE_ROWS = 100_000;

/**
 * What the answer reads of a row's text, held as ids of the generation's label vocabulary: its
 * label keys (terms and bigrams), for every member of a cluster; and, for the central posts a
 * description reads (read on demand: a second, longer analysis), its label words as written and
 * in its summary (core/maps/label-and-summary.ts, PostWords).
 */
interface RowWords {
  labelIds: Int32Array;
  described: DescribedWords | null;
}
interface DescribedWords {
  /** Each label-word occurrence's term id, and its surface where that is not the term itself. */
  surfaceIds: Int32Array;
  surfaceAs: Map<number, string> | null;
  summaryIds: Int32Array;
  /** PostWords.readable's answer once asked (null: not yet). */
  readable: boolean | null;
  language: string | null;
}
interface LabelCache {
  vocabulary: LabelVocabulary;
  rows: Map<number, RowWords>;
}
const labelCaches = new WeakMap<GenerationData, LabelCache>();
const counter = new KeyCounter();

/**
 * A row's words, kept for the generation's life: analysing the text of every returned row was the
 * main cost of an answer, and popular rows come back in answer after answer. Bounded: when full,
 * the oldest rows go (insertion order); when the vocabulary is full, both start again (before an
 * answer, see emergentNarratives).
 */
function labelCache(gen: GenerationData): LabelCache {
  let cache = labelCaches.get(gen);
  if (!cache) labelCaches.set(gen, (cache = { vocabulary: new LabelVocabulary(), rows: new Map() }));
  return cache;
}

/**
 * Start `to`'s words cache (a generation this thread is about to answer on) from `from`'s (the one
 * it replaces): the rows that are the same post at the same row in both (same uuid, not masked in
 * `to`) keep their words. A post's words follow from its text alone, which a later generation does
 * not change (a re-observation changes its counts), and rows keep their places in sealed segments
 * and in a head that was appended to; so a swap leaves those rows warm. Returns the rows kept.
 */
export function inheritRowWords(from: GenerationData, to: GenerationData): number {
  const old = labelCaches.get(from);
  if (!old || labelCaches.has(to)) return 0;
  const rows = new Map<number, RowWords>();
  for (const [row, words] of old.rows)
    if (row < to.index.rows && to.index.deleted[row] === 0 && from.index.uuid.get(row) === to.index.uuid.get(row)) rows.set(row, words);
  labelCaches.set(to, { vocabulary: old.vocabulary.copy(), rows });
  return rows.size;
}

/**
 * A row's words from the cache, or analysed now: its label keys; for a row a description will read
 * (`central`), its described words too, from the same single analysis of its text.
 */
function rowWords(cache: LabelCache, row: number, gen: GenerationData, central = false): RowWords {
  let words = cache.rows.get(row);
  if (!words) {
    if (central) {
      const text = textOf(gen, row);
      const { terms: textTerms, surfaces } = termsAndSurfaces(text);
      words = {
        labelIds: cache.vocabulary.idsOf(labelKeys(textTerms)),
        described: describedIds(cache.vocabulary, postWords(text, surfaces, textTerms)),
      };
    } else words = { labelIds: cache.vocabulary.idsOf(gen.labelWords.keysOf(row) ?? labelKeys(terms(textOf(gen, row)))), described: null };
    if (cache.rows.size >= LABEL_KEY_CACHE_ROWS) cache.rows.delete(cache.rows.keys().next().value!);
    cache.rows.set(row, words);
  }
  return words;
}

function describedIds(vocabulary: LabelVocabulary, post: PostWords): DescribedWords {
  let surfaceAs: Map<number, string> | null = null;
  post.surfaces.forEach(([term, surface], i) => {
    if (surface !== term) (surfaceAs ??= new Map()).set(i, surface);
  });
  return {
    surfaceIds: vocabulary.idsOf(post.surfaces.map(([term]) => term)),
    surfaceAs,
    summaryIds: vocabulary.idsOf([...post.summaryWords]),
    readable: null,
    language: post.language,
  };
}

/** The text a row is labelled and described by. */
function textOf(gen: GenerationData, row: number): string {
  return labelText(gen.content.title.get(row), gen.content.description.get(row));
}

/** Flags read from texts (rows of segments written before the stored flag), per generation and thread: -1 not read yet. */
const textFlags = new WeakMap<GenerationData, Int8Array>();

/** Whether the abuse lexicon flags a row: its stored flag, else (a segment written before it) its text, read once. */
function rowFlagged(gen: GenerationData, row: number): boolean {
  const stored = gen.index.enrichment.flaggedOf(row);
  if (stored !== null) return stored;
  let read = textFlags.get(gen);
  if (!read) textFlags.set(gen, (read = new Int8Array(gen.index.rows).fill(-1)));
  if (read[row] === -1) read[row] = flaggedPost(textOf(gen, row)) ? 1 : 0;
  return read[row] === 1;
}

// An emergent narrative's members are fixed: its central posts are picked once, on the first read of its detail.
const centralByMembers = new WeakMap<Int32Array, Int32Array>();

/** An emergent narrative's central posts (core/maps/central-posts.ts), picked when its detail is read, not in every answer. */
export function emergentCentral(gen: GenerationData, members: Int32Array): Int32Array {
  let central = centralByMembers.get(members);
  if (!central) {
    central = Int32Array.from(
      centralPosts(
        members,
        (r) => rowFlagged(gen, r),
        (r) => textOf(gen, r),
      ),
    );
    centralByMembers.set(members, central);
  }
  return central;
}

/** A central row's PostWords, from its cached ids (computed the first time a description reads the row). */
function describedWords(cache: LabelCache, row: number, gen: GenerationData): PostWords {
  const words = rowWords(cache, row, gen);
  const { vocabulary } = cache;
  if (!words.described) {
    const text = textOf(gen, row);
    words.described = describedIds(vocabulary, postWords(text, termSurfaces(text)));
  }
  const d = words.described;
  const keys = vocabulary.keys;
  return {
    surfaces: Array.from(d.surfaceIds, (id, i) => [keys[id]!, d.surfaceAs?.get(i) ?? keys[id]!] as const),
    summaryWords: new Set(Array.from(d.summaryIds, (id) => keys[id]!)),
    readable: () => (d.readable ??= postReadable(textOf(gen, row))),
    language: d.language,
  };
}

/** The answer's clusters (answer-clusters.ts), described as narratives of the search window. */
export function emergentNarratives(
  gen: GenerationData,
  window: WindowKey,
  query: string,
  ranked: readonly RankedRow[],
  cl: AnswerClusters,
): EmergentNarrative[] {
  const groups = new Map<number, number[]>();
  cl.assignment.forEach((c, i) => {
    if (c < 0) return;
    const g = groups.get(c);
    if (g) g.push(i);
    else groups.set(c, [i]);
  });
  if (groups.size === 0) return [];
  const { ordered, topTags, descriptions } = describeClusters(gen, cl, groups);
  const simOf = new Map(ranked.map((r) => [r.row, r.similarity]));
  const scope = { gen, window, query, computedAt: new Date().toISOString() };
  return ordered
    .map((members, ci) => {
      const queryRelevance = members.reduce((a, r) => a + Math.max(0, Math.min(1, simOf.get(r) ?? 0)), 0) / members.length;
      return emergentOf(scope, members, topTags[ci]!, descriptions[ci]!, queryRelevance);
    })
    .sort((a, b) => b.narrative.queryRelevance - a.narrative.queryRelevance || b.narrative.content_count - a.narrative.content_count);
}

/**
 * Each cluster (in cluster order) with its members most central first, its top tags, and its label,
 * summary and representative (core/maps/cluster-describer.ts), the rows' words read from the cache.
 */
function describeClusters(gen: GenerationData, cl: AnswerClusters, groups: Map<number, number[]>) {
  const { content } = gen;
  const rows = cl.rows;
  const clusters = [...groups.keys()].sort((a, b) => a - b);
  const cache = labelCache(gen);
  // A full vocabulary starts again before this answer's ids are taken, never in the middle.
  if (cache.vocabulary.full) (cache.vocabulary.clear(), cache.rows.clear());
  const memberRows = clusters.map((c) => groups.get(c)!.map((i) => rows[i]!));
  // Each cluster's members, most central first; their most central posts are the ones a description reads first.
  const ordered = clusters.map((c) =>
    groups
      .get(c)!
      .sort((a, b) => cl.similarity[b]! - cl.similarity[a]! || rows[a]! - rows[b]!)
      .map((i) => rows[i]!),
  );
  const centralRows = new Set(ordered.flatMap((members) => members.slice(0, DESCRIBE_POSTS)));
  const termIds = memberRows.map((rs) => rs.map((r) => rowWords(cache, r, gen, centralRows.has(r)).labelIds));
  const { vocabulary } = cache;
  const termLists = keyListsOf(termIds);
  const topTerms = counter.top(termLists.classes, termLists.lists, vocabulary.keys.length, LABEL_CANDIDATES, (id) => vocabulary.keys[id]!);
  const shared = counter.lastShared;
  const tagDict = content.tags.dict;
  const tags = keyListsOf(memberRows.map((rs) => rs.map((r) => content.tags.idsOf(r))));
  const topTags = counter
    .top(tags.classes, tags.lists, tagDict.length, LABEL_DEFAULTS.tags, (id) => tagDict[id]!)
    .map((t) => t.map((x) => x.key));
  // Label, summary and representative (core/maps/cluster-describer.ts), the rows read from the cache.
  const describer = new ClusterDescriber(
    ordered.map((members, ci) => ({ members, candidates: topTerms[ci]!, tags: topTags[ci]! })),
    {
      shared,
      termsOf: (r) => Array.from(rowWords(cache, r, gen).labelIds, (id) => vocabulary.keys[id]!),
      interactions: gen.members.interactions,
    },
  );
  for (let need = describer.next(); need.length > 0; need = describer.next())
    describer.give(new Map(need.map((r) => [r, describedWords(cache, r, gen)])));
  const descriptions = describer.result((r) => textOf(gen, r));
  return { ordered, topTags, descriptions };
}

/** One described cluster as an emergent narrative of the window: its counts, series, sentiment and id. */
function emergentOf(
  s: { gen: GenerationData; window: WindowKey; query: string; computedAt: string },
  members: number[],
  tags: string[],
  description: ReturnType<ClusterDescriber['result']>[number],
  queryRelevance: number,
): EmergentNarrative {
  const { gen, window, query, computedAt } = s;
  const { index, content } = gen;
  const bounds = gen.manifest.windows[window];
  const { creators, platforms, interactions } = memberStats(gen.members, members);
  const { representative, ...described } = description;
  const series = seriesStats(
    members.map((r) => index.publishedAt[r]!),
    index.asOfMs,
    windowDaysOf(gen, window),
  );
  const sentiment = narrativeSentiment(members.map((r) => ({ tone: index.enrichment.toneOf(r), moods: index.enrichment.moods.get(r) })));
  const id = `em-${createHash('sha256')
    .update(`${gen.id}\n${window}\n${query}\n${members.map((r) => index.uuid.get(r)).join(',')}`)
    .digest('hex')
    .slice(0, 16)}`;
  const narrative: EmergentInAnswer = {
    id,
    ...described,
    source: 'emergent',
    window_key: window,
    window_start: bounds.start,
    window_end: bounds.end,
    computed_at: computedAt,
    content_count: members.length,
    creator_count: creators,
    platform_count: platforms.size,
    total_engagement: String(Math.round(interactions)),
    emerging_score: series.emergingScore,
    momentum_score: series.momentumScore,
    burst_score: series.burstScore,
    top_tags: tags,
    score_breakdown: {
      content_count: members.length,
      creator_count: creators,
      platform_count: platforms.size,
      total_engagement: interactions,
      clustering_method: 'kmeans-cosine-query',
      ...(tags[0] ? { seed_tag: tags[0] } : {}),
    },
    narrative_key: null,
    acceleration: series.acceleration,
    diffusion: platformDiffusion(platforms, content.platforms.length),
    velocity: series.velocity,
    lifecycle: series.lifecycle,
    trajectory_confidence: series.trajectoryConfidence,
    representative_content_uuid: representative === null ? null : index.uuid.get(representative)!,
    sentiment_label: sentiment.label,
    sentiment_score: sentiment.score,
    sentiment_breakdown: sentiment.breakdown,
    flagged_share: flaggedShare(members, (r) => rowFlagged(gen, r)),
    queryRelevance,
  };
  return { narrative, members: Int32Array.from(members), dailyCounts: Array.from(series.counts) };
}

export type { LoadedNarrative };
