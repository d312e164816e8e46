// How a narrative is described beyond its counts, the same for the pipeline's narratives and a
// search answer's emergent ones (definitions: docs/fields.md, "Narratives"): its platform diffusion
// and its extractive summary.
import { mayHoldUrl, terms, termSurfaces } from '../analyzer.ts';
import { repairText } from '../text-repair.ts';
import { countSurfaces, labelWord, showLabel, shownSurface, surfaceForms } from './label-words.ts';

/** Central posts read per narrative for its label's spelling and its summary. */
export const DESCRIBE_POSTS = 20;

/**
 * A narrative's label as people wrote its words, and its summary, from the texts of its most
 * central posts (at most DESCRIBE_POSTS, most central first): `label` is the c-TF-IDF label of
 * analysed terms (labels.ts).
 */
export function describeNarrative(label: string, centralTexts: readonly string[]): { label: string; summary: string } {
  if (!labelOfWords(label)) {
    const shown = showLabel(label, surfaceForms(centralTexts));
    return { label: shown, summary: summarise(summaryText(centralTexts, label.split(/[, ]+/)) ?? shown) };
  }
  return describeFromWords(
    label,
    centralTexts.map((t) => postWords(t)),
    (i) => centralTexts[i]!,
  );
}

/**
 * What describing reads of one post, from one analysis of its text and one of its summary text,
 * so a server can keep it per row (serve/search/answer-narratives.ts) instead of analysing the
 * same popular posts answer after answer. Only label words are kept: a label made of its c-TF-IDF
 * keys has no other words (labelOfWords).
 */
export interface PostWords {
  /** [term, surface as surfaceForms counts it] for each label-word occurrence, in order. */
  surfaces: ReadonlyArray<readonly [string, string]>;
  /** Distinct label words of the post's summary text (cleanForSummary's). */
  summaryWords: ReadonlySet<string>;
  /** Whether any summary text is left after cleaning. */
  hasSummary: boolean;
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
  const surfaces: Array<readonly [string, string]> = [];
  for (const [term, raw] of analysed) if (labelWord(term)) surfaces.push([term, shownSurface(raw)]);
  const cleaned = cleanForSummary(text);
  const summaryTerms = !cleaned ? [] : cleaned === text && textTerms ? textTerms : terms(cleaned);
  return { surfaces, summaryWords: new Set(summaryTerms.filter(labelWord)), hasSummary: cleaned.length > 0 };
}

/** Whether every word of a label is a label word (a label of c-TF-IDF keys, not a tag or 'untitled' standing in). */
export function labelOfWords(label: string): boolean {
  return label.split(/[, ]+/).every(labelWord);
}

/**
 * describeNarrative from the posts' words (postWords), for a label of label words: the same label
 * and summary; `textOf(i)` is post i's text, read only for the post the summary is cut from.
 */
export function describeFromWords(
  label: string,
  posts: readonly PostWords[],
  textOf: (i: number) => string,
): { label: string; summary: string } {
  const shown = showLabel(label, countSurfaces(posts.map((p) => p.surfaces)));
  const want = label.split(/[, ]+/);
  let best = -1;
  let bestHits = -1;
  posts.forEach((p, i) => {
    if (!p.hasSummary) return;
    let hits = 0;
    for (const w of new Set(want)) if (p.summaryWords.has(w)) hits++;
    if (hits > bestHits) ((best = i), (bestHits = hits));
  });
  return { label: shown, summary: summarise(best >= 0 ? cleanForSummary(textOf(best)) : shown) };
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

/**
 * The text a summary is cut from: of the given posts (most central first), the one whose words
 * cover most of the label's terms (the first of equals), repaired (mojibake, HTML entities) and
 * cleaned of what does not say anything (links, @mentions, a trailing run of hashtags). Null when no post has text left.
 */
export function summaryText(texts: readonly string[], labelTerms: readonly string[]): string | null {
  const want = new Set(labelTerms);
  let best: string | null = null;
  let bestHits = -1;
  for (const raw of texts) {
    const text = cleanForSummary(raw);
    if (!text) continue;
    const hits = new Set(terms(text).filter((t) => want.has(t))).size;
    if (hits > bestHits) ((best = text), (bestHits = hits));
  }
  return best;
}

function cleanForSummary(text: string): string {
  // Each pattern runs only where its mark can be in the text (most posts have no URL or mention).
  let s = repairText(text);
  if (mayHoldUrl(s)) s = s.replace(/\bhttps?:\/\/\S+|\bwww\.\S+/giu, ' ');
  if (s.includes('@')) s = s.replace(/(^|\s)@[\p{L}\p{N}_.]+/gu, ' ');
  if (s.includes('#')) s = s.replace(/(\s+#[\p{L}\p{N}_]+)+\s*$/u, '');
  return s.replace(/\s+/g, ' ').trim();
}

/** Extractive summary: the representative post's own words, cut at a word boundary. */
export function summarise(text: string): string {
  const s = text.replace(/\s+/g, ' ').trim();
  if (s.length <= SUMMARY_CHARS) return s;
  const cut = s.slice(0, SUMMARY_CHARS);
  return `${cut.slice(0, Math.max(cut.lastIndexOf(' '), SUMMARY_CHARS - 40)).trimEnd()}…`;
}
