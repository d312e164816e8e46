// The text-derived fields of PublicEnrichment (docs/api.md, "PublicEnrichment") for one post. The pipeline fills the
// rest (noveltyScore, saturationScore, aestheticStyle, coverage.novelty) from neighbours and visual
// features, using scores.ts. See docs/enrichment.md for every field's definition and range.
import { analyze } from '../text/analyzer.ts';
import { brandProducts, loadBrandDictionary, type BrandDictionary, type BrandEntry } from './brands.ts';
import { emotionPosteriors, moodsFromPosteriors, type Emotion } from './emotion.ts';
import { attributeConfidence } from './scores.ts';
import { postKeywords } from './post-keywords.ts';
import { toneFrom, type Tone } from './tone.ts';
import { vaderScores } from './vader.ts';

export { tone, toneFrom, TONE_LABELS, type Tone, type ToneResult } from './tone.ts';
export { emotionMood, EMOTION_LABELS, type Emotion, type EmotionResult } from './emotion.ts';
export { brandProducts, compileBrands, loadBrandDictionary, DEFAULT_BRANDS, type BrandDictionary, type BrandEntry } from './brands.ts';
export { postKeywords, idfFromDocumentFrequency } from './post-keywords.ts';
export { attributeConfidence, noveltyScore, saturationScore } from './scores.ts';

/** Moods of a post whose tone is neutral are reported only when the emotion model is at least this sure. */
export const NEUTRAL_MOOD_MIN_CONFIDENCE = 0.6;
/** Confidence attributed to a dictionary brand match (exact, but names can be ambiguous). */
export const BRAND_MATCH_CONFIDENCE = 0.9;
/**
 * Confidence attributed to a post's aestheticStyle: the styles are fixed rules on measured pixel
 * statistics (docs/visual-features.md), exact as measurements but thresholds, not a learned
 * probability; a fixed prior like the brands', lower because a style is a matter of degree.
 */
export const VISUAL_STYLE_CONFIDENCE = 0.8;

interface EnrichTextOptions {
  /** Brand dictionary (compiled or a list); default DEFAULT_BRANDS. */
  brands?: BrandDictionary | BrandEntry[];
  /** idf of a term in the corpus; default 1 (themes are then the most frequent terms). */
  idf?: (term: string) => number;
  /** Number of themes (default 3). */
  themeCount?: number;
  /** The post's analyzer terms when the caller has them already (else analyze(text, language)). */
  terms?: string[];
}

interface TextEnrichment {
  tone: Tone | null;
  toneConfidence: number | null;
  emotionMood: Emotion[];
  brandProducts: string[];
  themes: string[];
  attributeConfidence: number | null;
  /** The confidences attributeConfidence averages (null: that extractor produced nothing). */
  attributeParts: { emotion: number | null; brands: number | null };
  coverage: { sentiment: boolean; attributes: boolean };
}

let defaultBrands: BrandDictionary | undefined;

export function enrichText(text: string | null | undefined, language?: string | null, opts: EnrichTextOptions = {}): TextEnrichment {
  const postTerms = opts.terms ?? analyze(text, language).terms;
  const v = vaderScores(text, language);
  if (!text || (postTerms.length === 0 && !v.evidence)) {
    return {
      tone: null,
      toneConfidence: null,
      emotionMood: [],
      brandProducts: [],
      themes: [],
      attributeConfidence: null,
      attributeParts: { emotion: null, brands: null },
      coverage: { sentiment: false, attributes: false },
    };
  }
  const post = emotionPosteriors(text, language, v);
  const t = toneFrom(v, post);
  const e = moodsFromPosteriors(post, v.english);
  const moods = t.evidence && (t.tone !== 'neutral' || e.confidence >= NEUTRAL_MOOD_MIN_CONFIDENCE) ? e.moods : [];
  const brands = brandProducts(text, opts.brands ?? (defaultBrands ??= loadBrandDictionary()));
  const th = postKeywords(postTerms, opts.idf ?? (() => 1), opts.themeCount ?? 3);
  const parts = {
    emotion: moods.length ? e.confidence : null,
    brands: brands.length ? BRAND_MATCH_CONFIDENCE : null,
  };
  return {
    tone: t.evidence ? t.tone : null,
    toneConfidence: t.evidence ? t.toneConfidence : null,
    emotionMood: moods,
    brandProducts: brands,
    themes: th,
    attributeConfidence: attributeConfidence(parts),
    attributeParts: parts,
    coverage: { sentiment: t.evidence, attributes: postTerms.length > 0 },
  };
}
