// The per-post text enrichment of the features stage (core/enrichment): tone, emotion/mood,
// brands, themes and their confidence, for every snapshot row, persisted in row order:
//   artifacts/enrichment.parquet  row_id, tone, tone_confidence, emotion_mood[], brand_products[],
//                                 themes[], attribute_confidence, coverage_sentiment, coverage_attributes
// Novelty and saturation need the HNSW neighbours and are added by the index stage's successor.
import { enrichText, idfFromDocumentFrequency, loadBrandDictionary } from '../../core/enrichment/index.ts';
import { writeRowTable } from '../row-table.ts';
import type { StageContext } from '../stage.ts';
import { StageAborted } from '../stage.ts';

export interface EnrichmentInput {
  texts: string[];
  languages: Array<string | null>;
  vocab: Map<string, number>;
  docIds: Uint32Array[];
}

export async function computeEnrichment(ctx: StageContext, input: EnrichmentInput): Promise<{ ms: number; withTone: number }> {
  const t0 = performance.now();
  const rows = input.texts.length;
  const words = new Array<string>(input.vocab.size);
  for (const [w, id] of input.vocab) words[id] = w;
  // Document frequency of every term, for the themes' idf.
  const df = new Uint32Array(words.length);
  const seen = new Int32Array(words.length).fill(-1);
  input.docIds.forEach((ids, d) => {
    for (const t of ids) if (seen[t] !== d) (seen[t] = d), df[t]!++;
  });
  const idf = idfFromDocumentFrequency((t) => {
    const id = input.vocab.get(t);
    return id === undefined ? 0 : df[id]!;
  }, rows);
  const brands = loadBrandDictionary(ctx.config.BRANDS_FILE ?? null);
  const out: unknown[] = [];
  let withTone = 0;
  const bar = ctx.progress('enrichment', rows);
  for (let r = 0; r < rows; r++) {
    const terms = Array.from(input.docIds[r]!, (id) => words[id]!);
    const e = enrichText(input.texts[r], input.languages[r], { brands, idf, terms });
    if (e.tone) withTone++;
    out.push({
      row_id: r, tone: e.tone, tone_confidence: e.toneConfidence, emotion_mood: e.emotionMood, brand_products: e.brandProducts,
      themes: e.themes, attribute_confidence: e.attributeConfidence, coverage_sentiment: e.coverage.sentiment, coverage_attributes: e.coverage.attributes,
    });
    if (r % 5000 === 0) {
      bar.update(r);
      if (ctx.signal.aborted) throw new StageAborted('features');
    }
  }
  bar.stop();
  await writeRowTable(ctx, 'enrichment', {
    row_id: 'BIGINT', tone: 'VARCHAR', tone_confidence: 'DOUBLE', emotion_mood: 'VARCHAR[]', brand_products: 'VARCHAR[]',
    themes: 'VARCHAR[]', attribute_confidence: 'DOUBLE', coverage_sentiment: 'BOOLEAN', coverage_attributes: 'BOOLEAN',
  }, out);
  return { ms: Math.round(performance.now() - t0), withTone };
}
