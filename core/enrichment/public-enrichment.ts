// PublicEnrichment (docs/api.md, "PublicEnrichment") of every row of a generation, held compactly for serving: numbers in
// typed arrays (NaN = null), lists as ids into a per-field dictionary. A million rows take tens of
// megabytes instead of the hundreds a million small JS objects would; objects are built only for
// the rows a response returns. Sources: enrichment.parquet (text and visual attributes) and
// neighbour-scores.parquet (novelty, saturation). Definitions in docs/enrichment.md.
import path from 'node:path';
import { openDuckDB, sqlString } from '../duckdb.ts';
import { StringLists } from '../string-lists.ts';

export interface PublicEnrichment {
  aestheticStyle: string[];
  attributeConfidence: number | null;
  brandProducts: string[];
  coverage: { attributes: boolean; novelty: boolean; sentiment: boolean };
  emotionMood: string[];
  noveltyScore: number | null;
  saturationScore: number | null;
  themes: string[];
  tone: string | null;
  toneConfidence: number | null;
}

const TONES = ['negative', 'neutral', 'positive'] as const;
const COVER_ATTRIBUTES = 1;
const COVER_SENTIMENT = 2;
const COVER_NOVELTY = 4;
const COVER_VISUAL = 8;

export class EnrichmentStore {
  readonly tone: Int8Array;
  readonly toneConfidence: Float32Array;
  readonly attributeConfidence: Float32Array;
  readonly novelty: Float32Array;
  readonly saturation: Float32Array;
  readonly coverage: Uint8Array;
  readonly moods: StringLists;
  readonly brands: StringLists;
  readonly themes: StringLists;
  readonly styles: StringLists;

  constructor(readonly rows: number) {
    this.tone = new Int8Array(rows).fill(-1);
    this.toneConfidence = new Float32Array(rows).fill(NaN);
    this.attributeConfidence = new Float32Array(rows).fill(NaN);
    this.novelty = new Float32Array(rows).fill(NaN);
    this.saturation = new Float32Array(rows).fill(NaN);
    this.coverage = new Uint8Array(rows);
    this.moods = new StringLists(rows);
    this.brands = new StringLists(rows);
    this.themes = new StringLists(rows);
    this.styles = new StringLists(rows);
  }

  /** The row's tone, or null. */
  toneOf(row: number): string | null {
    const t = this.tone[row]!;
    return t >= 0 ? TONES[t]! : null;
  }

  get(row: number): PublicEnrichment {
    const nn = (x: number) => (Number.isNaN(x) ? null : x);
    const c = this.coverage[row]!;
    return {
      aestheticStyle: this.styles.get(row),
      attributeConfidence: nn(this.attributeConfidence[row]!),
      brandProducts: this.brands.get(row),
      // "attributes" covers both extractors of attributes: the text's and the media's style.
      coverage: {
        attributes: (c & (COVER_ATTRIBUTES | COVER_VISUAL)) !== 0,
        novelty: (c & COVER_NOVELTY) !== 0,
        sentiment: (c & COVER_SENTIMENT) !== 0,
      },
      emotionMood: this.moods.get(row),
      noveltyScore: nn(this.novelty[row]!),
      saturationScore: nn(this.saturation[row]!),
      themes: this.themes.get(row),
      tone: this.toneOf(row),
      toneConfidence: nn(this.toneConfidence[row]!),
    };
  }
}

interface EnrichmentRow {
  row_id: number;
  tone: string | null;
  tone_confidence: number | null;
  emotion_mood: string[] | null;
  brand_products: string[] | null;
  themes: string[] | null;
  aesthetic_style: string[] | null;
  attribute_confidence: number | null;
  coverage_sentiment: boolean;
  coverage_attributes: boolean;
  coverage_visual: boolean;
  novelty_score: number | null;
  saturation_score: number | null;
  coverage_novelty: boolean | null;
  [k: string]: unknown;
}

const CHUNK = 100_000;

export async function loadEnrichmentStore(generationDir: string, rows: number): Promise<EnrichmentStore> {
  const store = new EnrichmentStore(rows);
  const db = await openDuckDB();
  const file = (name: string) => sqlString(path.join(generationDir, `${name}.parquet`));
  const num = (x: number | null) => (x === null || x === undefined ? NaN : Number(x));
  try {
    for (let start = 0; start < rows; start += CHUNK) {
      // Both tables hold one row per snapshot row, in row order; read in chunks to bound memory.
      const chunk = await db.all<EnrichmentRow>(`SELECT e.*, n.novelty_score, n.saturation_score, n.coverage_novelty
        FROM read_parquet(${file('enrichment')}) e LEFT JOIN read_parquet(${file('neighbour-scores')}) n USING (row_id)
        WHERE e.row_id >= ${start} AND e.row_id < ${start + CHUNK} ORDER BY e.row_id`);
      for (const r of chunk) {
        const row = Number(r.row_id);
        if (row < 0 || row >= rows) throw new Error(`${generationDir}: enrichment row ${row} outside 0..${rows - 1}`);
        store.tone[row] = r.tone === null ? -1 : TONES.indexOf(r.tone as (typeof TONES)[number]);
        store.toneConfidence[row] = num(r.tone_confidence);
        store.attributeConfidence[row] = num(r.attribute_confidence);
        store.novelty[row] = num(r.novelty_score);
        store.saturation[row] = num(r.saturation_score);
        store.coverage[row] =
          (r.coverage_attributes ? COVER_ATTRIBUTES : 0) |
          (r.coverage_sentiment ? COVER_SENTIMENT : 0) |
          (r.coverage_novelty ? COVER_NOVELTY : 0) |
          (r.coverage_visual ? COVER_VISUAL : 0);
        store.moods.set(row, r.emotion_mood);
        store.brands.set(row, r.brand_products);
        store.themes.set(row, r.themes);
        store.styles.set(row, r.aesthetic_style);
      }
    }
  } finally {
    db.close();
  }
  for (const l of [store.moods, store.brands, store.themes, store.styles]) l.seal();
  return store;
}
