// PublicEnrichment (docs/api.md, "PublicEnrichment") of every row of a generation, held compactly for serving: numbers in
// typed arrays (NaN = null), lists as ids into a per-field dictionary. A million rows take tens of
// megabytes instead of the hundreds a million small JS objects would; objects are built only for
// the rows a response returns. Sources, per time segment: enrichment.parquet (text and visual
// attributes) and neighbour-scores.parquet (novelty, saturation). Definitions in docs/enrichment.md.
import path from 'node:path';
import { columnNames, openDuckDB, sqlString } from '../infra/duckdb.ts';
import { toShared } from '../infra/shared-array.ts';
import { StringLists, type StringListsParts } from '../infra/string-lists.ts';

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
// Not PublicEnrichment: whether the abuse lexicon flags the post (enrichment.parquet's flagged; unknown in a segment
// written before it), for the flagged_share of a search answer's narratives. Two bits of the coverage byte, no array of its own.
const FLAG_KNOWN = 16;
const FLAGGED = 32;

/** The store's numbers per row (NaN = null; tone -1 = none). */
interface EnrichmentNumbers {
  tone: Int8Array;
  toneConfidence: Float32Array;
  attributeConfidence: Float32Array;
  novelty: Float32Array;
  saturation: Float32Array;
  coverage: Uint8Array;
}

/** A sealed store's memory in SharedArrayBuffers (EnrichmentStore.share), for worker threads. */
export interface EnrichmentParts extends EnrichmentNumbers {
  rows: number;
  moods: StringListsParts;
  brands: StringListsParts;
  themes: StringListsParts;
  styles: StringListsParts;
}

// The numbers' fields are declared by the interface of the same name (declaration merging).
export interface EnrichmentStore extends EnrichmentNumbers {}
export class EnrichmentStore {
  readonly moods: StringLists;
  readonly brands: StringLists;
  readonly themes: StringLists;
  readonly styles: StringLists;

  /** A store to fill (then seal()), or with `parts` (another thread's share()) a sealed one over them. */
  constructor(
    readonly rows: number,
    parts?: EnrichmentParts,
  ) {
    if (parts) {
      if (parts.rows !== rows) throw new Error(`EnrichmentStore: parts of ${parts.rows} rows, ${rows} expected`);
      ({ tone: this.tone, toneConfidence: this.toneConfidence, attributeConfidence: this.attributeConfidence } = parts);
      ({ novelty: this.novelty, saturation: this.saturation, coverage: this.coverage } = parts);
      this.moods = new StringLists(rows, parts.moods);
      this.brands = new StringLists(rows, parts.brands);
      this.themes = new StringLists(rows, parts.themes);
      this.styles = new StringLists(rows, parts.styles);
      return;
    }
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

  /** Copy rows [from, from + n) of `src` (sealed) to rows [to, to + n) (rows are filled in increasing order). */
  copyRows(src: EnrichmentStore, from: number, to: number, n: number): void {
    this.tone.set(src.tone.subarray(from, from + n), to);
    this.toneConfidence.set(src.toneConfidence.subarray(from, from + n), to);
    this.attributeConfidence.set(src.attributeConfidence.subarray(from, from + n), to);
    this.novelty.set(src.novelty.subarray(from, from + n), to);
    this.saturation.set(src.saturation.subarray(from, from + n), to);
    this.coverage.set(src.coverage.subarray(from, from + n), to);
    for (let i = 0; i < n; i++) {
      this.moods.set(to + i, src.moods.get(from + i));
      this.brands.set(to + i, src.brands.get(from + i));
      this.themes.set(to + i, src.themes.get(from + i));
      this.styles.set(to + i, src.styles.get(from + i));
    }
  }

  /** After the last row is filled. */
  seal(): void {
    for (const l of [this.moods, this.brands, this.themes, this.styles]) l.seal();
  }

  /** The sealed store moved into SharedArrayBuffers (this object then reads them too), for worker threads. */
  share(): EnrichmentParts {
    this.tone = toShared(this.tone);
    this.toneConfidence = toShared(this.toneConfidence);
    this.attributeConfidence = toShared(this.attributeConfidence);
    this.novelty = toShared(this.novelty);
    this.saturation = toShared(this.saturation);
    this.coverage = toShared(this.coverage);
    return {
      rows: this.rows,
      tone: this.tone,
      toneConfidence: this.toneConfidence,
      attributeConfidence: this.attributeConfidence,
      novelty: this.novelty,
      saturation: this.saturation,
      coverage: this.coverage,
      moods: this.moods.share(),
      brands: this.brands.share(),
      themes: this.themes.share(),
      styles: this.styles.share(),
    };
  }

  /** Whether the abuse lexicon flags the row, or null when its segment was written before the flag. */
  flaggedOf(row: number): boolean | null {
    const c = this.coverage[row]!;
    return c & FLAG_KNOWN ? (c & FLAGGED) !== 0 : null;
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

const CHUNK = 100_000;

/** Where a store's rows are read from: FROM-able SQL of an enrichment table and of a neighbour-scores table (row_id keyed). */
interface EnrichmentTables {
  enrichment: string;
  neighbours: string;
}

/** The tables of a folder holding enrichment.parquet and neighbour-scores.parquet (a segment). */
export function enrichmentTablesIn(dir: string): EnrichmentTables {
  const file = (name: string) => `read_parquet(${sqlString(path.join(dir, `${name}.parquet`))})`;
  return { enrichment: file('enrichment'), neighbours: file('neighbour-scores') };
}

/**
 * Read `rows` rows (row_id 0..rows-1 of `tables`) into `store` from row `firstRow` on. Rows are
 * set in increasing order (StringLists): fill segments oldest first, then seal().
 */
export async function fillEnrichment(store: EnrichmentStore, tables: EnrichmentTables, firstRow: number, rows: number): Promise<void> {
  const lists = `e.emotion_mood, e.brand_products, e.themes, e.aesthetic_style`;
  const neighbours = `n.novelty_score, n.saturation_score, n.coverage_novelty FROM ${tables.enrichment} e LEFT JOIN ${tables.neighbours} n USING (row_id)`;
  const db = await openDuckDB();
  const num = (x: number | null) => (x === null || x === undefined ? NaN : Number(x));
  try {
    const flagged = (await columnNames(db, tables.enrichment)).has('flagged') ? 'e.flagged' : 'NULL::BOOLEAN AS flagged';
    for (let start = 0; start < rows; start += CHUNK) {
      // Both tables hold one row per row, in row order; read in chunks to bound memory.
      const c = await db.columns(`SELECT e.row_id::DOUBLE AS row_id, e.tone, e.tone_confidence, e.attribute_confidence, ${lists},
          e.coverage_sentiment, e.coverage_attributes, e.coverage_visual, ${flagged}, ${neighbours}
        WHERE e.row_id >= ${start} AND e.row_id < ${start + CHUNK} ORDER BY e.row_id`);
      const ids = c.row_id as number[];
      for (let k = 0; k < ids.length; k++) {
        const local = ids[k]!;
        if (local < 0 || local >= rows) throw new Error(`enrichment row ${local} outside 0..${rows - 1}`);
        const row = firstRow + local;
        const tone = c.tone![k] as string | null;
        store.tone[row] = tone === null ? -1 : TONES.indexOf(tone as (typeof TONES)[number]);
        store.toneConfidence[row] = num(c.tone_confidence![k] as number | null);
        store.attributeConfidence[row] = num(c.attribute_confidence![k] as number | null);
        store.novelty[row] = num(c.novelty_score![k] as number | null);
        store.saturation[row] = num(c.saturation_score![k] as number | null);
        store.coverage[row] =
          (c.coverage_attributes![k] ? COVER_ATTRIBUTES : 0) |
          (c.coverage_sentiment![k] ? COVER_SENTIMENT : 0) |
          (c.coverage_novelty![k] ? COVER_NOVELTY : 0) |
          (c.coverage_visual![k] ? COVER_VISUAL : 0) |
          (c.flagged![k] === null ? 0 : FLAG_KNOWN | (c.flagged![k] ? FLAGGED : 0));
        store.moods.set(row, c.emotion_mood![k] as string[] | null);
        store.brands.set(row, c.brand_products![k] as string[] | null);
        store.themes.set(row, c.themes![k] as string[] | null);
        store.styles.set(row, c.aesthetic_style![k] as string[] | null);
      }
    }
  } finally {
    db.close();
  }
}
