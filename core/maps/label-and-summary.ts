// How a cluster is described beyond its counts, the same for the pipeline's narratives and a
// search answer's emergent ones (definitions: docs/fields.md, "Narratives"): its platform diffusion,
// its label as people wrote its words, and its summary, cut from its representative post: of the
// posts read (most central first), the readable one (core/text/readable.ts) that says most of
// the label. cluster-describer.ts decides which posts are read.
import { mayHoldUrl, termSurfaces, terms } from '../text/analyzer.ts';
import { textLanguage } from '../text/language.ts';
import { readable } from '../text/readable.ts';
import { repairText } from '../text/text-repair.ts';
import { countSurfaces, labelWord, showLabel, shownSurfaces } from './label-words.ts';

/** Central posts read per cluster for its label's spelling and its summary. */
export const DESCRIBE_POSTS = 20;

/**
 * What describing reads of one post, from one analysis of its text and one of its summary text,
 * so a server can keep it per row (serve/search/answer-narratives.ts) instead of analysing the
 * same popular posts answer after answer. Only label words are kept: a label has no other words
 * that are shown as written or counted for the summary.
 */
export interface PostWords {
  /** [term, surface as surfaceForms counts it] for each label-word occurrence, in order. */
  surfaces: ReadonlyArray<readonly [string, string]>;
  /** Distinct label words of the post's summary text (cleanForSummary's). */
  summaryWords: ReadonlySet<string>;
  /**
   * Whether the post can stand for its cluster (core/text/readable.ts) with summary text left after
   * cleaning: asked only of the posts a choice reaches (the lexicon costs ~0.1 ms a post), and
   * answered once.
   */
  readable: () => boolean;
  /** The language of its text (core/text/language.ts), null when too few function words tell it. */
  language: string | null;
}

/**
 * `analysed`: the text's termSurfaces, and `textTerms` its terms(), when the caller has them (a
 * summary text that cleaning left as it was is not analysed again).
 */
export function postWords(
  text: string,
  analysed: ReadonlyArray<readonly [string, string]> = termSurfaces(text),
  textTerms?: readonly string[],
): PostWords {
  const surfaces = shownSurfaces(text, analysed, labelWord);
  const cleaned = cleanForSummary(text);
  const summaryTerms = !cleaned ? [] : cleaned === text && textTerms ? textTerms : terms(cleaned);
  let known: boolean | undefined;
  return {
    surfaces,
    summaryWords: new Set(summaryTerms.filter(labelWord)),
    readable: () => (known ??= cleaned.length > 0 && readable(text)),
    language: textLanguage(text),
  };
}

/** PostWords.readable of a text. */
export function postReadable(text: string): boolean {
  return cleanForSummary(text).length > 0 && readable(text);
}

interface Description {
  /** The label as people wrote its words. */
  label: string;
  summary: string;
  /** Index (in the posts given) of the post the summary is cut from, the representative; -1 when none is readable. */
  pick: number;
}

/**
 * A cluster's description from the words of the posts read for it (most central first): the label
 * (c-TF-IDF keys of analysed terms, labels.ts) with each term as its posts wrote it most often,
 * counting `spelling` too (posts read only for that); the representative, the readable post whose
 * summary text holds most of the label's words (of equals, the more engaged, then the more
 * central: byLabelWords); the summary, its text cut (`textOf(i)` is post i's text, read only for
 * that post), or the label when no post is readable.
 */
export function describeFromWords(
  label: string,
  posts: readonly PostWords[],
  textOf: (i: number) => string,
  spelling: readonly PostWords[] = [],
  interactions: (i: number) => number = () => 0,
): Description {
  const shown = showLabel(label, countSurfaces([...posts, ...spelling].map((p) => p.surfaces)));
  const pick = byLabelWords(label, posts, interactions).find((i) => posts[i]!.readable()) ?? -1;
  return { label: shown, summary: summarise(pick >= 0 ? cleanForSummary(textOf(pick)) : shown), pick };
}

/**
 * Indexes of the posts by how well they stand for the cluster: most of the label's words first,
 * then the more engaged (`interactions(i)`: post i's likes + comments + shares), then the more central (the earlier).
 */
function byLabelWords(
  label: string,
  posts: readonly Pick<PostWords, 'summaryWords'>[],
  interactions: (i: number) => number = () => 0,
): number[] {
  const want = new Set(label.split(/[, ]+/));
  const hits = posts.map((p) => {
    let n = 0;
    for (const w of want) if (p.summaryWords.has(w)) n++;
    return n;
  });
  const engaged = posts.map((_, i) => interactions(i));
  return hits.map((_, i) => i).sort((a, b) => hits[b]! - hits[a]! || engaged[b]! - engaged[a]! || a - b);
}

/** describeFromWords from the posts' texts. */
export function describeNarrative(label: string, texts: readonly string[], spelling: readonly string[] = []): Description {
  return describeFromWords(
    label,
    texts.map((t) => postWords(t)),
    (i) => texts[i]!,
    spelling.map((t) => postWords(t)),
  );
}

/** Normalised Shannon entropy of the platform split (0: one platform .. 1: even over all of the snapshot's). */
export function platformDiffusion(counts: Map<number, number>, platformsInSnapshot: number): number | null {
  if (platformsInSnapshot < 2) return null;
  let n = 0;
  for (const c of counts.values()) n += c;
  let h = 0;
  for (const c of counts.values()) if (c > 0) h -= (c / n) * Math.log(c / n);
  return h / Math.log(platformsInSnapshot);
}

const SUMMARY_CHARS = 240;
/** A text at least this long ending in a word glued to an ellipsis was cut by its platform mid-word. */
const CUT_TEXT_CHARS = 100;

/**
 * A post's text as a summary shows it: repaired (mojibake, HTML entities) and cleaned of what does
 * not say anything (links, @mentions, a retweet's "RT", a trailing run of hashtags, cut or not),
 * and without a last word its platform cut ("... che non co…" reads "... che non…").
 */
export function cleanForSummary(text: string): string {
  // Each pattern runs only where its mark can be in the text (most posts have no URL or mention).
  let s = repairText(text);
  if (mayHoldUrl(s)) s = s.replace(/\bhttps?:\/\/\S+|\bwww\.\S+/giu, ' ');
  if (s.includes('@')) s = s.replace(/(^|\s)[.]?@[\p{L}\p{N}_.]+:?/gu, ' ');
  if (s.includes('#')) s = s.replace(/(\s+#[\p{L}\p{N}_]+)+\s*(?:…|\.\.\.)?\s*$/u, '');
  s = s
    .replace(/\s+/g, ' ')
    .trim()
    .replace(/^RT\b[\s:]*/, '')
    .replace(/\s+via$/i, '');
  if (s.length >= CUT_TEXT_CHARS) s = s.replace(/\s+[\p{L}\p{N}]+(?:…|\.\.\.)$/u, '…');
  return s;
}

/** Extractive summary: the representative post's own words, cut at a word boundary. */
export function summarise(text: string): string {
  const s = text.replace(/\s+/g, ' ').trim();
  if (s.length <= SUMMARY_CHARS) return s;
  const cut = s.slice(0, SUMMARY_CHARS);
  return `${cut.slice(0, Math.max(cut.lastIndexOf(' '), SUMMARY_CHARS - 40)).trimEnd()}…`;
}
