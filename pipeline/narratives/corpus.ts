// What the narratives stage reads about every snapshot row, in row order: the post columns
// (post-columns.ts), the analysed terms from the features stage's doc-terms, tone and moods from
// enrichment.parquet, and the text vectors from text-vectors.f32.
import fs from 'node:fs/promises';
import path from 'node:path';
import { EnrichmentStore, loadEnrichmentStore } from '../../core/enrichment/public-enrichment.ts';
import { loadVectorSpace, nonZeroMask } from '../../core/vector-space.ts';
import { readDocTerms, type DocTerms } from '../doc-terms.ts';
import { loadPostColumns, type PostColumns } from '../post-columns.ts';
import type { StageContext } from '../stage-context.ts';

export interface NarrativeCorpus extends PostColumns {
  terms: DocTerms;
  enrichment: EnrichmentStore;
  vectors: Float32Array;
  dim: number;
  /** 1 where the row has a text vector (every window's clustering reads it). */
  hasVector: Uint8Array;
}

export async function loadNarrativeCorpus(ctx: StageContext, expectedRows: number): Promise<NarrativeCorpus> {
  const posts = await loadPostColumns(ctx, expectedRows);
  const { rows } = posts;
  const { artifacts, work } = ctx.layout;
  const terms = await readDocTerms(path.join(work, 'intermediate', 'doc-terms.bin'));
  const space = loadVectorSpace(artifacts, 'text');
  const raw = await fs.readFile(path.join(artifacts, 'text-vectors.f32'));
  const vectors = new Float32Array(raw.buffer, raw.byteOffset, raw.byteLength / 4);
  if (vectors.length !== rows * space.dim) throw new Error(`text-vectors.f32 holds ${vectors.length / space.dim} rows, expected ${rows}`);
  return {
    ...posts,
    terms,
    enrichment: await loadEnrichmentStore(artifacts, rows),
    vectors,
    dim: space.dim,
    hasVector: nonZeroMask(vectors, space.dim, rows),
  };
}

/** Row i's analysed terms. */
export function rowTerms(c: NarrativeCorpus, i: number): string[] {
  const out: string[] = [];
  for (let j = c.terms.offsets[i]!; j < c.terms.offsets[i + 1]!; j++) out.push(c.terms.vocab[c.terms.ids[j]!]!);
  return out;
}
