// What describes a window's clusters (its narratives, or its themes: pipeline/themes/build.ts), one
// rule for both (docs/fields.md, "Narratives"): their figures read off their members (counts,
// engagement, the daily series, sentiment, the representative), and their words: c-TF-IDF keys
// over the window's clusters as the classes, then the label spelled as the members wrote it and
// the summary cut from the most central posts (core/maps/describe.ts).
import { DESCRIBE_POSTS, describeNarrative, platformDiffusion } from '../../core/maps/describe.ts';
import { KeyCounter } from '../../core/maps/label-counts.ts';
import { LABEL_DEFAULTS, labelFrom } from '../../core/maps/labels.ts';
import { memberStats, representativeOf } from '../../core/maps/members.ts';
import { sentimentOfCodes, type NarrativeSentiment } from '../../core/maps/sentiment.ts';
import { seriesStats, type SeriesStats } from '../../core/maps/series.ts';
import { DAY_MS } from '../../core/windows.ts';
import type { NarrativeCorpus } from './corpus.ts';

/** A window's length in days (at least 1): the span of its clusters' daily series. */
export function windowDays(w: { start: string; end: string }): number {
  return Math.max(1, (Date.parse(w.end) - Date.parse(w.start)) / DAY_MS);
}

export interface MemberFigures {
  representative: number;
  contentCount: number;
  creatorCount: number;
  platformCount: number;
  totalEngagement: number;
  diffusion: number | null;
  series: SeriesStats;
  sentiment: NarrativeSentiment;
}

/** The figures of a cluster's members (rows, most central first; `times` their publication instants in the same order). */
export function memberFigures(
  corpus: Pick<NarrativeCorpus, 'creator' | 'platform' | 'interactions' | 'platforms' | 'feeling'>,
  members: readonly number[],
  times: ArrayLike<number>,
  asOf: number,
  days: number,
): MemberFigures {
  const { creators, platforms, interactions } = memberStats(corpus, members);
  return {
    representative: representativeOf(corpus, members),
    contentCount: members.length,
    creatorCount: creators,
    platformCount: platforms.size,
    totalEngagement: interactions,
    diffusion: platformDiffusion(platforms, corpus.platforms.length),
    series: seriesStats(times, asOf, days),
    sentiment: sentimentOfCodes(corpus.feeling, members),
  };
}

/** The labels' and the top tags' counters (dense scratch arrays, reused window after window). */
const counter = new KeyCounter();
const tagCounter = new KeyCounter();

export interface ClusterWords {
  /** The c-TF-IDF label of analysed terms (the top tag, or 'untitled', when no term names it). */
  label: string;
  topTags: string[];
}

/** Label and top tags of each cluster of a window, the clusters given by their member rows (all of the window's: the classes of c-TF-IDF). */
export function clusterWords(
  corpus: Pick<NarrativeCorpus, 'labelKeys' | 'tagKeys' | 'tagNames'>,
  classes: readonly Int32Array[],
): ClusterWords[] {
  const keys = corpus.labelKeys;
  const topTerms = counter.top(classes, keys, keys.size, 12, (id) => keys.name(id));
  const shared = counter.lastShared;
  // top_tags: the same c-TF-IDF over the members' tags (ClassCounts.top's weights and order, counted as ids).
  const topTags = tagCounter.top(classes, corpus.tagKeys, corpus.tagNames.length, LABEL_DEFAULTS.tags, (id) => corpus.tagNames[id]!);
  return classes.map((_, c) => {
    const tags = topTags[c]!.map((t) => t.key);
    return { label: labelFrom(topTerms[c]!, LABEL_DEFAULTS.terms, shared) || tags[0] || 'untitled', topTags: tags };
  });
}

export interface Describable {
  label: string;
  summary: string;
  representative: number;
  /** Member rows, most central first. */
  members: readonly number[];
}

/** Each cluster's label as its posts write it and its summary, read from its representative and most central posts (set in place). */
export async function describeClusters(
  drafts: readonly Describable[],
  textOf: (rows: number[]) => Promise<Map<number, string>>,
): Promise<void> {
  const heads = drafts.map((d) => [...new Set([d.representative, ...d.members.slice(0, DESCRIBE_POSTS)])]);
  const texts = await textOf(heads.flat());
  drafts.forEach((d, i) =>
    Object.assign(
      d,
      describeNarrative(
        d.label,
        heads[i]!.map((r) => texts.get(r) ?? ''),
      ),
    ),
  );
}
