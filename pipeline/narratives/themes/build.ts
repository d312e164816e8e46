// The themes of one window, above its narratives: the narratives grouped by
// core/clustering/themes.ts, each theme described as a narrative is (pipeline/narratives/
// cluster-figures-and-words.ts) over the union of its narratives' members, with the window's themes as the
// classes of its c-TF-IDF label. Field definitions: docs/fields.md ("Themes").
import { dot } from '../../../core/vectors/dot.ts';
import { burstProfiles } from '../../../core/clustering/theme-bursts.ts';
import { groupNarratives, themeCentre, type ThemeCriterion, type ThemeGrouping, THEME_CRITERION } from '../../../core/clustering/themes.ts';
import { mostCentralFirst } from '../../../core/maps/members.ts';
import { StoryLexicon } from '../../../core/clustering/story-lexicon.ts';
import { storyWords, type BuiltNarrative, type WindowSpec } from '../build.ts';
import type { NarrativeCorpus } from '../corpus.ts';
import {
  clusterWords,
  describeClusters,
  memberFigures,
  windowSpan,
  type MemberFigures,
  type WindowSpan,
} from '../cluster-figures-and-words.ts';

export interface BuiltTheme extends MemberFigures {
  window: WindowSpec;
  /** Its narratives: positions in the window's list, ascending. */
  narratives: number[];
  /** Member rows (its narratives' members), most central to the theme first. */
  members: number[];
  /** Unit mean of its narratives' centroids weighted by their members (themeCentre). */
  centroid: Float32Array;
  label: string;
  topTags: string[];
  summary: string;
  /** The member the summary is cut from; null when none read is readable. */
  representative: number | null;
  /** The posts a reader opens first (core/maps/central-posts.ts): members, most central first. */
  central: number[];
}

interface WindowThemes {
  themes: BuiltTheme[];
  /** Each narrative's theme (a position in `themes`). */
  themeOf: Int32Array;
  grouping: ThemeGrouping;
}

/**
 * A theme's members, most central first: a theme of one narrative keeps its narrative's order (its
 * centre is that narrative's); several narratives' members are ordered by their cosine to the
 * theme's centre (ties: the older row).
 */
function centralFirst(corpus: Pick<NarrativeCorpus, 'vectors' | 'dim'>, parts: readonly BuiltNarrative[], centre: Float32Array): number[] {
  if (parts.length === 1) return parts[0]!.members;
  // Ascending rows, so ties of centrality go to the older post (as in a narrative).
  const rows = Int32Array.from(parts.flatMap((p) => p.members)).sort();
  const { vectors, dim } = corpus;
  const similarity = Float32Array.from(rows, (r) => dot(vectors, r * dim, centre, 0, dim));
  const order = mostCentralFirst(
    Int32Array.from(rows, (_, i) => i),
    similarity,
  );
  return Array.from(order, (i) => rows[i]!);
}

/** A theme's figures: a theme of one narrative has its narrative's (the same members, in the same order). */
function figuresOf(
  corpus: NarrativeCorpus,
  parts: readonly BuiltNarrative[],
  members: number[],
  asOfMs: number,
  span: WindowSpan,
): MemberFigures {
  if (parts.length === 1) {
    const { contentCount, creatorCount, platformCount, totalEngagement, diffusion, series, sentiment, flaggedShare } = parts[0]!;
    return { contentCount, creatorCount, platformCount, totalEngagement, diffusion, series, sentiment, flaggedShare };
  }
  const times = Float64Array.from(members, (r) => corpus.publishedAt[r]!);
  return memberFigures(corpus, members, times, asOfMs, span);
}

/** Words per narrative in its lexical vector (its words of highest c-TF-IDF against the window). */
const THEME_WORDS = 50;
/** The share of the content part's cosine that comes from the text centroids (the rest from the words). */
const THEME_VECTOR_SHARE = 0.25;

/**
 * What the grouping compares of each narrative: what it says and when it is told. The content part
 * joins its unit text centroid and its words (the THEME_WORDS of highest c-TF-IDF against the
 * window, unit length) so that their cosine is THEME_VECTOR_SHARE x the centroids' + the rest x the
 * words' (BERTopic's hierarchical topics use the words alone); the time part is its excess over the
 * window's 6-hour profile, unit length (core/clustering/theme-bursts.ts), weighted by β (0.175 for a
 * narrative flat over the window up to 0.35 for one all burst):
 *   cos(v_i, v_j) = √((1 − β_i)(1 − β_j)) cos(content) + √(β_i β_j) cos(excess).
 * The words keep apart crises told in one language, which the centroids alone join (the Italian
 * earthquake and the Sardinian floods); the centroids join the synonyms the words miss; the time
 * part joins what no word joins, an event told in two languages (the Brazilian nightclub fire in
 * English and Portuguese), and parts what words join, two typhoons of the Philippines a year apart.
 * On the real crises (CrisisLexT6; 11 crises of T26 with 15,000 everyday tweets), window all, mean
 * best-theme F1 with the content part alone 0.87 and 0.85 (the centroids alone 0.86 and 0.76, the
 * words alone 0.80 and 0.82), with the time part 0.88 and 0.92, the T26 set's lowest crisis 0.70 ->
 * 0.83 (every window: docs/fields.md, "Themes").
 */
function themeVectors(corpus: NarrativeCorpus, w: WindowSpec, narratives: readonly BuiltNarrative[]): Float32Array[] {
  const rows: number[] = [];
  for (let r = w.firstRow; r < corpus.hasVector.length; r++) if (corpus.hasVector[r]) rows.push(r);
  const lexicon = new StoryLexicon(storyWords(corpus), rows);
  const tops = narratives.map((n) => lexicon.weightsOf(n.members, THEME_WORDS));
  const column = new Map<number, number>();
  for (const t of tops) for (const id of t.ids) if (!column.has(id)) column.set(id, column.size);
  const timesOf = (rs: readonly number[]) => Float64Array.from(rs, (r) => corpus.publishedAt[r]!);
  const bursts = burstProfiles(
    timesOf(rows),
    narratives.map((n) => timesOf(n.members)),
    Date.parse(w.start),
    Date.parse(w.end),
  );
  // Time columns: the bins where some narrative rises above the window.
  const bin = new Map<number, number>();
  for (const p of bursts) p.excess.forEach((e, b) => e > 0 && !bin.has(b) && bin.set(b, bin.size));
  const dim = corpus.dim;
  const words = dim + column.size;
  return narratives.map((n, i) => {
    const v = new Float32Array(words + bin.size);
    const { excess, weight } = bursts[i]!;
    const content = Math.sqrt(1 - weight);
    const a = content * Math.sqrt(THEME_VECTOR_SHARE);
    const b = content * Math.sqrt(1 - THEME_VECTOR_SHARE);
    for (let k = 0; k < dim; k++) v[k] = a * n.centroid[k]!;
    const { ids, weights } = tops[i]!;
    const norm = Math.sqrt(weights.reduce((s, x) => s + x * x, 0)) || 1;
    ids.forEach((id, j) => (v[dim + column.get(id)!] = (b * weights[j]!) / norm));
    const e = Math.sqrt(excess.reduce((s, x) => s + x * x, 0)) || 1;
    const t = Math.sqrt(weight) / e;
    for (const [k, col] of bin) if (excess[k]! > 0) v[words + col] = t * excess[k]!;
    return v;
  });
}

export async function buildThemes(
  corpus: NarrativeCorpus,
  w: WindowSpec,
  narratives: readonly BuiltNarrative[],
  asOfMs: number,
  textOf: (rows: number[]) => Promise<Map<number, string>>,
  criterion: ThemeCriterion = THEME_CRITERION,
): Promise<WindowThemes> {
  const grouping = groupNarratives(
    themeVectors(corpus, w, narratives).map((v, i) => ({ centroid: v, size: narratives[i]!.contentCount })),
    criterion,
  );
  const parts: number[][] = Array.from({ length: grouping.themes }, () => []);
  grouping.themeOf.forEach((t, i) => parts[t]!.push(i));
  const span = windowSpan(corpus, w, asOfMs);
  const drafts = parts.map((idx) => {
    const mine = idx.map((i) => narratives[i]!);
    const centroid = themeCentre(
      mine.map((n) => ({ centroid: n.centroid, size: n.contentCount })),
      corpus.dim,
    );
    const members = centralFirst(corpus, mine, centroid);
    return { window: w, narratives: idx, members, centroid, ...figuresOf(corpus, mine, members, asOfMs, span) };
  });
  const words = clusterWords(
    corpus,
    drafts.map((d) => Int32Array.from(d.members)),
  );
  const themes: BuiltTheme[] = drafts.map((d, t) => ({
    ...d,
    label: '',
    topTags: words.words[t]!.topTags,
    summary: '',
    representative: null,
    central: [],
  }));
  await describeClusters(corpus, themes, words, textOf);
  return { themes, themeOf: grouping.themeOf, grouping };
}
