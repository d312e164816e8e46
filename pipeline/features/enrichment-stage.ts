// The per-post text enrichment of the features stage (core/enrichment) for the computed rows; each
// segment's enrichment.parquet (row_id, then ENRICHMENT_COLUMNS) is assembled from these and the
// rows it keeps (features/segment-writer.ts).
// The text workers computed everything but themes (text-worker.ts); themes need the corpus's
// document frequencies, known only once every row is analysed, and are added here, with the
// aesthetic style from the visual features and the attribute confidence over text and style.
// Novelty and saturation need the HNSW neighbours and are added by the index stage.
import { attributeConfidence, idfFromDocumentFrequency, postKeywords, VISUAL_STYLE_CONFIDENCE } from '../../core/enrichment/enrich-text.ts';
import { writeRowTable } from '../store/row-table.ts';
import type { StageContext } from '../context/stage-context.ts';
import { StageAborted } from '../context/stage-context.ts';
import type { TextEnrichmentRow } from './text-task.ts';

interface EnrichmentInput {
  partial: TextEnrichmentRow[];
  /** aestheticStyle of the rows whose media was read (visual-stage.ts). */
  styles: Map<number, string[]>;
  vocab: Map<string, number>;
  docIds: Uint32Array[];
}

const THEMES_PER_POST = 3;

export const ENRICHMENT_COLUMNS = {
  tone: 'VARCHAR',
  tone_confidence: 'DOUBLE',
  emotion_mood: 'VARCHAR[]',
  brand_products: 'VARCHAR[]',
  themes: 'VARCHAR[]',
  aesthetic_style: 'VARCHAR[]',
  attribute_confidence: 'DOUBLE',
  coverage_sentiment: 'BOOLEAN',
  coverage_attributes: 'BOOLEAN',
  coverage_visual: 'BOOLEAN',
  flagged: 'BOOLEAN',
} as const;

/**
 * The themes' idf: document frequencies over the computed rows, plus (incremental run) those of
 * the served generation's rows, `served` (a post's themes are fixed as of its insertion; a full run
 * recomputes every post's).
 */
export function themeIdf(input: Pick<EnrichmentInput, 'vocab' | 'docIds'>, served: { docs: number; df: Map<string, number> } | null) {
  const df = new Uint32Array(input.vocab.size);
  const seen = new Int32Array(input.vocab.size).fill(-1);
  input.docIds.forEach((ids, d) => {
    for (const t of ids) if (seen[t] !== d) ((seen[t] = d), df[t]!++);
  });
  return idfFromDocumentFrequency(
    (t) => {
      const id = input.vocab.get(t);
      return (id === undefined ? 0 : df[id]!) + (served?.df.get(t) ?? 0);
    },
    input.docIds.length + (served?.docs ?? 0),
  );
}

/** The computed rows' enrichment (by ci) to `out` (Parquet: ci, then ENRICHMENT_COLUMNS). */
export async function writeComputedEnrichment(
  ctx: StageContext,
  input: EnrichmentInput,
  idf: (term: string) => number,
  out: string,
): Promise<{ ms: number; withTone: number }> {
  const t0 = performance.now();
  const rows = input.partial.length;
  const words = new Array<string>(input.vocab.size);
  for (const [w, id] of input.vocab) words[id] = w;
  const table: unknown[] = new Array(rows);
  let withTone = 0;
  for (let r = 0; r < rows; r++) {
    const { emotion_confidence, brand_confidence, ...e } = input.partial[r]!;
    if (e.tone) withTone++;
    const terms = Array.from(input.docIds[r]!, (id) => words[id]!);
    const style = input.styles.get(r);
    table[r] = {
      ci: r,
      ...e,
      // A post with no text has no themes (and no other text attribute): coverage_attributes says so.
      themes: e.coverage_attributes ? postKeywords(terms, idf, THEMES_PER_POST) : [],
      aesthetic_style: style ?? [],
      attribute_confidence: attributeConfidence({
        emotion: emotion_confidence,
        brands: brand_confidence,
        style: style?.length ? VISUAL_STYLE_CONFIDENCE : null,
      }),
      coverage_visual: style !== undefined,
    };
    if (r % 50_000 === 0 && ctx.signal.aborted) throw new StageAborted('features');
  }
  await writeRowTable(ctx, 'computed-enrichment', { ci: 'BIGINT', ...ENRICHMENT_COLUMNS }, table, out);
  return { ms: Math.round(performance.now() - t0), withTone };
}
