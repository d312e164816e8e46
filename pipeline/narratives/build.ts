// The narratives of one window: its stories (core/clustering/stories.ts; noise allowed) described by every field of
// a narrative (docs/api.md, "Narrative") that does not depend on a query. Field definitions: docs/fields.md ("Narratives").
import type { ClusteredRange } from '../../core/clustering/kmeans-by-silhouette.ts';
import { clusterStoryRange, STORY_DEFAULTS, type StoryOptions, type StoryWords } from '../../core/clustering/stories.ts';
import { platformDiffusion, postWords } from '../../core/maps/describe.ts';
import { describeClusters, LABEL_CANDIDATES } from '../../core/maps/describe-clusters.ts';
import { memberStats, mostCentralFirst } from '../../core/maps/members.ts';
import type { NarrativeCorpus } from './corpus.ts';
import { LABEL_DEFAULTS } from '../../core/maps/labels.ts';
import { KeyCounter } from '../../core/maps/label-counts.ts';
import { sentimentOfCodes, type NarrativeSentiment } from '../../core/maps/sentiment.ts';
import { seriesStats, type SeriesStats } from '../../core/maps/series.ts';
import { DAY_MS } from '../../core/windows.ts';

/** The labels' and the top tags' counters (dense scratch arrays, reused window after window). */
const counter = new KeyCounter();
const tagCounter = new KeyCounter();

export interface WindowSpec {
  key: string;
  start: string;
  end: string;
  firstRow: number;
}

export interface BuiltNarrative {
  window: WindowSpec;
  /** Member rows, most central first. */
  members: number[];
  similarity: number[];
  centroid: Float32Array;
  label: string;
  topTags: string[];
  summary: string;
  /** The member the summary is cut from (core/maps/describe-clusters.ts); null when none read is readable. */
  representative: number | null;
  contentCount: number;
  creatorCount: number;
  platformCount: number;
  totalEngagement: number;
  diffusion: number | null;
  series: SeriesStats;
  sentiment: NarrativeSentiment;
  seedTag: string | null;
}

export interface WindowResult {
  narratives: BuiltNarrative[];
  k: number;
  silhouette: number;
  rows: number;
  noise: number;
  warmStart: boolean;
}

/** The words the key test reads: the label words (ids below the vocabulary's size; bigrams above). */
export function storyWords(corpus: NarrativeCorpus): StoryWords {
  return { lists: corpus.labelKeys, words: corpus.terms.vocab.length };
}

export async function buildWindow(
  corpus: NarrativeCorpus,
  w: WindowSpec,
  asOf: number,
  textOf: (rows: number[]) => Promise<Map<number, string>>,
  opts: StoryOptions = STORY_DEFAULTS,
  prior?: readonly Float32Array[],
  /** The window's clusters when already made (an incremental run's, core/clustering/merge-models.ts). */
  given?: ClusteredRange,
): Promise<WindowResult> {
  const { dim } = corpus;
  const {
    rows,
    clustering: cl,
    clusters,
    byCluster,
  } = given ?? clusterStoryRange(corpus.vectors, dim, corpus.hasVector, w.firstRow, storyWords(corpus), opts, prior);
  // c-TF-IDF over every kept cluster of the window: terms for labels (counted as ids), tags for top_tags.
  const keys = corpus.labelKeys;
  const classes = clusters.map((c) => {
    const idx = byCluster.get(c)!;
    const out = new Int32Array(idx.length);
    for (let j = 0; j < idx.length; j++) out[j] = rows[idx[j]!]!;
    return out;
  });
  const topTerms = counter.top(classes, keys, keys.size, LABEL_CANDIDATES, (id) => keys.name(id));
  // top_tags: the same c-TF-IDF over the members' tags (ClassCounts.top's weights and order, counted as ids).
  const topTags = tagCounter.top(classes, corpus.tagKeys, corpus.tagNames.length, LABEL_DEFAULTS.tags, (id) => corpus.tagNames[id]!);
  const windowDays = Math.max(1, (Date.parse(w.end) - Date.parse(w.start)) / DAY_MS);
  const drafts = clusters.map((c, ci) => {
    // Rows ascend with positions, so ties go to the older row.
    const idx = mostCentralFirst(byCluster.get(c)!, cl.similarity);
    // Plain loops into preallocated arrays: a million members through map() callbacks cost seconds.
    const members = new Array<number>(idx.length);
    const similarity = new Array<number>(idx.length);
    const times = new Float64Array(idx.length);
    for (let j = 0; j < idx.length; j++) {
      const r = rows[idx[j]!]!;
      members[j] = r;
      similarity[j] = cl.similarity[idx[j]!]!;
      times[j] = corpus.publishedAt[r]!;
    }
    const { creators, platforms, interactions: engagement } = memberStats(corpus, members);
    const tags = topTags[ci]!.map((t) => t.key);
    return {
      window: w,
      members,
      similarity,
      centroid: cl.centroids.slice(c * dim, (c + 1) * dim),
      label: '',
      topTags: tags,
      summary: '',
      representative: null as number | null,
      contentCount: members.length,
      creatorCount: creators,
      platformCount: platforms.size,
      totalEngagement: engagement,
      diffusion: platformDiffusion(platforms, corpus.platforms.length),
      series: seriesStats(times, asOf, windowDays),
      sentiment: sentimentOfCodes(corpus.feeling, members),
      seedTag: tags[0] ?? null,
    } satisfies BuiltNarrative;
  });
  // Labels, summaries and representatives read the words of each narrative's most central posts.
  const { vocab, offsets, ids } = corpus.terms;
  const described = await describeClusters(
    drafts.map((d, i) => ({ members: d.members, candidates: topTerms[i]!, tags: d.topTags })),
    {
      shared: counter.lastShared,
      *termsOf(r) {
        for (let j = offsets[r]!; j < offsets[r + 1]!; j++) yield vocab[ids[j]!]!;
      },
      interactions: corpus.interactions,
    },
    textOf,
    (t) => postWords(t),
  );
  drafts.forEach((d, i) => Object.assign(d, described[i]!));
  const noise = cl.assignment.reduce((a, c) => a + (c < 0 ? 1 : 0), 0);
  return { narratives: drafts, k: cl.k, silhouette: cl.silhouette, rows: rows.length, noise, warmStart: cl.warmStart };
}
