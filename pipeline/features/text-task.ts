// The messages between the features stage and its text workers (text-worker.ts).

export interface TextTask {
  rows: number[];
  texts: string[];
  languages: Array<string | null>;
  /** Each row's labelText (core/maps/row-label-words.ts): what its label words are taken from. */
  labelTexts: string[];
}

/** Per row, the text enrichment without themes (column names as in enrichment.parquet). */
export interface TextEnrichmentRow {
  tone: string | null;
  tone_confidence: number | null;
  emotion_mood: string[];
  brand_products: string[];
  /** The confidences of the text's attribute extractors (null: nothing extracted); the features
   *  stage averages them with the visual style's into attribute_confidence. */
  emotion_confidence: number | null;
  brand_confidence: number | null;
  coverage_sentiment: boolean;
  coverage_attributes: boolean;
  /** Whether the abuse lexicon flags its title and description (core/text/abuse.ts, flaggedPost). */
  flagged: boolean;
}

export interface TextResult {
  rows: number[];
  /** Each row's terms joined by TERM_SEP, rows joined by DOC_SEP (one string clones fast). */
  terms: string;
  /** Row i's term hashes are hashes[offsets[i] .. offsets[i+1]). */
  hashes: Uint32Array;
  offsets: Uint32Array;
  enrichment: TextEnrichmentRow[];
  /** Each row's labelWordRuns joined by TERM_SEP (RUN_BREAK: an empty word), rows joined by DOC_SEP. */
  labelWords: string;
}

export const TERM_SEP = '\u0001';
export const DOC_SEP = '\u0002';

export interface TextWorkerData {
  brandsFile: string | null;
}
