// How a narrative is described beyond its counts, the same for the pipeline's narratives and a
// search answer's emergent ones (definitions: docs/fields.md, "Narratives"): its platform diffusion
// and its extractive summary.
import { terms } from '../analyzer.ts';
import { repairText } from '../text-repair.ts';
import { showLabel, surfaceForms } from './label-words.ts';

/** Central posts read per narrative for its label's spelling and its summary. */
export const DESCRIBE_POSTS = 20;

/**
 * A narrative's label as people wrote its words, and its summary, from the texts of its most
 * central posts (at most DESCRIBE_POSTS, most central first): `label` is the c-TF-IDF label of
 * analysed terms (labels.ts).
 */
export function describeNarrative(label: string, centralTexts: readonly string[]): { label: string; summary: string } {
  const shown = showLabel(label, surfaceForms(centralTexts));
  return { label: shown, summary: summarise(summaryText(centralTexts, label.split(/[, ]+/)) ?? shown) };
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
  return repairText(text)
    .replace(/\bhttps?:\/\/\S+|\bwww\.\S+/giu, ' ')
    .replace(/(^|\s)@[\p{L}\p{N}_.]+/gu, ' ')
    .replace(/(\s+#[\p{L}\p{N}_]+)+\s*$/u, '')
    .replace(/\s+/g, ' ')
    .trim();
}

/** Extractive summary: the representative post's own words, cut at a word boundary. */
export function summarise(text: string): string {
  const s = text.replace(/\s+/g, ' ').trim();
  if (s.length <= SUMMARY_CHARS) return s;
  const cut = s.slice(0, SUMMARY_CHARS);
  return `${cut.slice(0, Math.max(cut.lastIndexOf(' '), SUMMARY_CHARS - 40)).trimEnd()}…`;
}
