// What describes a window's clusters (its narratives, or its themes: pipeline/narratives/themes/build.ts), one
// rule for both (docs/fields.md, "Narratives"): their figures read off their members (counts,
// engagement, the daily series, sentiment, the share the abuse lexicon flags), and their words: c-TF-IDF keys over the
// window's clusters as the classes, then the label, the representative and the summary read from the most
// typical readable posts (core/maps/cluster-describer.ts), and the central posts a reader opens first
// (core/maps/central-posts.ts).
import { platformDiffusion, postWords } from '../../core/maps/label-and-summary.ts';
import { describeClusters as describeFromPosts, LABEL_CANDIDATES } from '../../core/maps/cluster-describer.ts';
import { KeyCounter } from '../../core/maps/label-counts.ts';
import { LABEL_DEFAULTS, type WeightedKey } from '../../core/maps/labels.ts';
import { memberStats } from '../../core/maps/members.ts';
import { centralPostsOf, flaggedShare } from '../../core/maps/central-posts.ts';
import { flaggedPost } from '../../core/text/abuse.ts';
import { sentimentOfCodes, type NarrativeSentiment } from '../../core/maps/sentiment.ts';
import { dailyCounts, seriesStats, type SeriesStats } from '../../core/maps/series.ts';
import type { RowWindow } from '../maps/post-columns.ts';
import { DAY_MS } from '../../core/snapshots/windows.ts';
import { FLAG_UNKNOWN, FLAGGED, NOT_FLAGGED, type NarrativeCorpus } from './corpus.ts';

/** A window's length in days (at least 1): the span of its clusters' daily series. */
function windowDays(w: { start: string; end: string }): number {
  return Math.max(1, (Date.parse(w.end) - Date.parse(w.start)) / DAY_MS);
}

/** A window's daily series' span: its days, and which of them the corpus has any post on (seriesStats' `active`). */
export interface WindowSpan {
  days: number;
  active: Uint8Array;
}

/** The span of window `w` (its rows from w.firstRow on) as of `asOfMs`. */
export function windowSpan(corpus: Pick<NarrativeCorpus, 'publishedAt'>, w: RowWindow, asOfMs: number): WindowSpan {
  const days = windowDays(w);
  const counts = dailyCounts(corpus.publishedAt.subarray(w.firstRow), asOfMs, Math.max(1, Math.ceil(days)));
  return { days, active: Uint8Array.from(counts, (c) => (c > 0 ? 1 : 0)) };
}

export interface MemberFigures {
  contentCount: number;
  creatorCount: number;
  platformCount: number;
  totalEngagement: number;
  diffusion: number | null;
  series: SeriesStats;
  sentiment: NarrativeSentiment;
  /** The share of the members the abuse lexicon flags (flagged_share). */
  flaggedShare: number;
}

/** The figures of a cluster's members (rows, most central first; `times` their publication instants in the same order). */
export function memberFigures(
  corpus: Pick<NarrativeCorpus, 'creator' | 'platform' | 'interactions' | 'platforms' | 'feeling' | 'flagged'>,
  members: readonly number[],
  times: ArrayLike<number>,
  asOfMs: number,
  span: WindowSpan,
): MemberFigures {
  const { creators, platforms, interactions } = memberStats(corpus, members);
  return {
    contentCount: members.length,
    creatorCount: creators,
    platformCount: platforms.size,
    totalEngagement: interactions,
    diffusion: platformDiffusion(platforms, corpus.platforms.length),
    series: seriesStats(times, asOfMs, span.days, span.active),
    sentiment: sentimentOfCodes(corpus.feeling, members),
    flaggedShare: flaggedShare(members, (r) => corpus.flagged[r] === FLAGGED),
  };
}

/** Rows whose flags are read from their texts in one query. */
const FLAG_READ_ROWS = 5_000;

/**
 * The abuse flags of the clusters' members (`clusters`: their rows) whose segment stored none
 * (written before the flag existed), set in place from their texts: the features stage's rule
 * (core/text/abuse.ts, flaggedPost), at this stage's cost, until a full run rewrites those segments.
 */
export async function flagsFromTexts(
  corpus: Pick<NarrativeCorpus, 'flagged'>,
  clusters: ReadonlyArray<ArrayLike<number>>,
  textOf: (rows: number[]) => Promise<Map<number, string>>,
): Promise<void> {
  const unknown: number[] = [];
  for (const rows of clusters) for (let i = 0; i < rows.length; i++) if (corpus.flagged[rows[i]!] === FLAG_UNKNOWN) unknown.push(rows[i]!);
  for (let at = 0; at < unknown.length; at += FLAG_READ_ROWS) {
    const chunk = unknown.slice(at, at + FLAG_READ_ROWS);
    const texts = await textOf(chunk);
    for (const r of chunk) corpus.flagged[r] = flaggedPost(texts.get(r) ?? '') ? FLAGGED : NOT_FLAGGED;
  }
}

/** The labels' and the top tags' counters (dense scratch arrays, reused window after window). */
const counter = new KeyCounter();
const tagCounter = new KeyCounter();

interface ClusterWords {
  /** Label candidates, best first (KeyCounter.top); describeClusters picks the label among them. */
  candidates: WeightedKey[];
  topTags: string[];
}

/**
 * Label candidates and top tags of each cluster of a window, the clusters given by their member
 * rows (all of the window's: the classes of c-TF-IDF); `shared`: the keys they share.
 */
export function clusterWords(
  corpus: Pick<NarrativeCorpus, 'labelKeys' | 'tagKeys' | 'tagNames'>,
  classes: readonly Int32Array[],
): { words: ClusterWords[]; shared: ReadonlySet<string> } {
  const keys = corpus.labelKeys;
  const topTerms = counter.top(classes, keys, keys.size, LABEL_CANDIDATES, (id) => keys.name(id));
  const shared = counter.lastShared;
  // top_tags: the same c-TF-IDF over the members' tags (ClassCounts.top's weights and order, counted as ids).
  const topTags = tagCounter.top(classes, corpus.tagKeys, corpus.tagNames.length, LABEL_DEFAULTS.tags, (id) => corpus.tagNames[id]!);
  return { words: classes.map((_, c) => ({ candidates: topTerms[c]!, topTags: topTags[c]!.map((t) => t.key) })), shared };
}

interface Describable {
  label: string;
  summary: string;
  /** The member the summary is cut from; null when none read is readable. */
  representative: number | null;
  /** Member rows, most central first. */
  members: readonly number[];
  topTags: string[];
  /** The posts a reader opens first (core/maps/central-posts.ts): members, most central first. */
  central: number[];
}

/** `textOf` remembering what it read: the central posts are mostly the most central members describing read. */
function remembered(textOf: (rows: number[]) => Promise<Map<number, string>>): (rows: number[]) => Promise<Map<number, string>> {
  const texts = new Map<number, string>();
  return async (rows) => {
    const missing = rows.filter((r) => !texts.has(r));
    if (missing.length > 0) {
      const got = await textOf(missing);
      for (const r of missing) texts.set(r, got.get(r) ?? '');
    }
    return new Map(rows.map((r) => [r, texts.get(r)!]));
  };
}

/**
 * Each cluster's label, representative, summary and central posts (set in place), read from its
 * most typical readable posts; the members' flags known (flagsFromTexts).
 */
export async function describeClusters(
  corpus: Pick<NarrativeCorpus, 'terms' | 'interactions' | 'flagged'>,
  drafts: readonly Describable[],
  words: { words: readonly ClusterWords[]; shared: ReadonlySet<string> },
  readTexts: (rows: number[]) => Promise<Map<number, string>>,
): Promise<void> {
  const textOf = remembered(readTexts);
  const { vocab, offsets, ids } = corpus.terms;
  const described = await describeFromPosts(
    drafts.map((d, i) => ({ members: d.members, candidates: words.words[i]!.candidates, tags: d.topTags })),
    {
      shared: words.shared,
      *termsOf(r) {
        for (let j = offsets[r]!; j < offsets[r + 1]!; j++) yield vocab[ids[j]!]!;
      },
      interactions: corpus.interactions,
    },
    textOf,
    (t) => postWords(t),
  );
  drafts.forEach((d, i) => Object.assign(d, described[i]!));
  const central = await centralPostsOf(drafts, (r) => (corpus.flagged[r] === FLAG_UNKNOWN ? null : corpus.flagged[r] === FLAGGED), textOf);
  drafts.forEach((d, i) => (d.central = central[i]!));
}
