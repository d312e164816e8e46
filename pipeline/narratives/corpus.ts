// What the narratives stage reads about every row of the planned generation, in row order: the post
// columns (post-columns.ts), and across its segments (planned-rows.ts) the analysed terms, tone and
// moods from enrichment.parquet, and the text vectors.
import { EnrichmentStore, loadEnrichmentStore } from '../../core/enrichment/public-enrichment.ts';
import { loadVectorSpace, nonZeroMask } from '../../core/vector-space.ts';
import type { DocTerms } from '../doc-terms.ts';
import { plannedTable, readPlannedDocTerms, readPlannedVectors } from '../planned-rows.ts';
import { loadPostColumns, type PostColumns } from '../post-columns.ts';
import type { SegmentPlan } from '../segment-plan.ts';
import type { StageContext } from '../stage-context.ts';

export interface NarrativeCorpus extends PostColumns {
  terms: DocTerms;
  enrichment: EnrichmentStore;
  vectors: Float32Array;
  dim: number;
  /** 1 where the row has a text vector (every window's clustering reads it). */
  hasVector: Uint8Array;
}

export async function loadNarrativeCorpus(ctx: StageContext, plan: SegmentPlan): Promise<NarrativeCorpus> {
  const posts = await loadPostColumns(ctx, plan);
  const { rows } = posts;
  const space = loadVectorSpace(ctx.layout.artifacts, 'text');
  const vectors = await readPlannedVectors(ctx, plan, 'text-vectors.f32', space.dim);
  const hasVector = nonZeroMask(vectors, space.dim, rows);
  // A masked row (a deleted post) is never a member.
  for (let r = 0; r < rows; r++) hasVector[r]! &= posts.live[r]!;
  return {
    ...posts,
    terms: await readPlannedDocTerms(ctx, plan),
    enrichment: await loadEnrichmentStore(
      { enrichment: plannedTable(ctx, plan, 'enrichment'), neighbours: plannedTable(ctx, plan, 'neighbour-scores') },
      rows,
    ),
    vectors,
    dim: space.dim,
    hasVector,
  };
}

/** Row i's analysed terms. */
export function rowTerms(c: NarrativeCorpus, i: number): string[] {
  const out: string[] = [];
  for (let j = c.terms.offsets[i]!; j < c.terms.offsets[i + 1]!; j++) out.push(c.terms.vocab[c.terms.ids[j]!]!);
  return out;
}
