// The narratives of one window: its stories (core/clustering/stories.ts; noise allowed) described by every field of
// a narrative (docs/api.md, "Narrative") that does not depend on a query. Field definitions: docs/fields.md ("Narratives").
import type { ClusteredRange } from '../../core/clustering/kmeans-by-silhouette.ts';
import { clusterStoryRange, STORY_DEFAULTS, type StoryOptions } from '../../core/clustering/stories.ts';
import { DAY_MS } from '../../core/snapshots/windows.ts';
import type { StoryWords } from '../../core/clustering/story-lexicon.ts';
import { mostCentralFirst } from '../../core/maps/members.ts';
import type { BuiltWindow } from '../maps/map-stage.ts';
import type { RowWindow } from '../maps/post-columns.ts';
import type { NarrativeCorpus } from './corpus.ts';
import {
  clusterWords,
  describeClusters,
  flagsFromTexts,
  memberFigures,
  windowSpan,
  type MemberFigures,
} from './cluster-figures-and-words.ts';

/** A window (7d, 30d, 90d, all), from its first row on. */
export type WindowSpec = RowWindow;

export interface BuiltNarrative extends MemberFigures {
  window: WindowSpec;
  /** Member rows, most central first. */
  members: number[];
  similarity: number[];
  centroid: Float32Array;
  label: string;
  topTags: string[];
  summary: string;
  /** The member the summary is cut from (core/maps/cluster-describer.ts); null when none read is readable. */
  representative: number | null;
  /** The posts a reader opens first (core/maps/central-posts.ts): members, most central first. */
  central: number[];
  seedTag: string | null;
}

type WindowResult = BuiltWindow<BuiltNarrative>;

/** The words the key test reads: the label words (ids below the vocabulary's size; bigrams above). */
export function storyWords(corpus: NarrativeCorpus): StoryWords {
  return {
    lists: corpus.labelKeys,
    words: corpus.terms.vocab.length,
    days: Int32Array.from(corpus.publishedAt, (t) => Math.floor(t / DAY_MS)),
  };
}

export async function buildWindow(
  corpus: NarrativeCorpus,
  w: WindowSpec,
  asOfMs: number,
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
  const classes = clusters.map((c) => {
    const idx = byCluster.get(c)!;
    const out = new Int32Array(idx.length);
    for (let j = 0; j < idx.length; j++) out[j] = rows[idx[j]!]!;
    return out;
  });
  const words = clusterWords(corpus, classes);
  // flagged_share counts every member's flag: those of rows in segments written before the flag, from their texts.
  await flagsFromTexts(corpus, classes, textOf);
  const span = windowSpan(corpus, w, asOfMs);
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
    const tags = words.words[ci]!.topTags;
    return {
      window: w,
      members,
      similarity,
      centroid: cl.centroids.slice(c * dim, (c + 1) * dim),
      label: '',
      topTags: tags,
      summary: '',
      representative: null,
      central: [],
      ...memberFigures(corpus, members, times, asOfMs, span),
      seedTag: tags[0] ?? null,
    } satisfies BuiltNarrative;
  });
  // Labels, representatives and summaries read the words of each narrative's most typical posts.
  await describeClusters(corpus, drafts, words, textOf);
  const noise = cl.assignment.reduce((a, c) => a + (c < 0 ? 1 : 0), 0);
  return { clusters: drafts, k: cl.k, silhouette: cl.silhouette, rows: rows.length, noise, warmStart: cl.warmStart };
}
