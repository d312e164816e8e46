// GET /narratives/{id}/related (free; docs/api.md, "Free reads"): the narratives of the same window
// whose text centroid is nearest this one's, by cosine, those under RELATED_MIN_SIMILARITY left
// out. Related means about the same thing: the map's text search on a label's words matched a
// football transfer to a story of the same words in another sense; the centroids are the
// members' own text. An emergent narrative's centroid is its members' mean, computed here.
import Router from '@koa/router';
import type { ApiState } from '../generation/api-state.ts';
import { z } from 'zod';
import type { EmergentStore } from '../search/emergent-store.ts';
import type { GenerationData, LoadedGeneration } from '../generation/loaded-generation.ts';
import { intField, queryFrom } from '../http/query.ts';
import type { Narrative } from '../generation/load-maps.ts';
import { resolveNarrative } from './narrative-lookup.ts';

/** Cosine of the centroids under which another narrative is not related (measured on the sample: docs/api.md). */
export const RELATED_MIN_SIMILARITY = 0.5;

export const relatedNarrativesQuery = z.object({
  limit: intField('limit', 1, 20).default(5).describe('1..20, default 5'),
});

/** The unit mean of rows' text vectors (rows without one skipped), null when none has one. */
function meanOf(gen: GenerationData, rows: ArrayLike<number>): Float32Array | null {
  const { vectors } = gen.index;
  const { dim } = vectors;
  const sum = new Float64Array(dim);
  const one = new Float64Array(dim);
  let n = 0;
  for (let i = 0; i < rows.length; i++) {
    if (!vectors.hasVector(rows[i]!)) continue;
    vectors.decodeInto(rows[i]!, one, 0);
    for (let k = 0; k < dim; k++) sum[k]! += one[k]!;
    n++;
  }
  const norm = Math.sqrt(sum.reduce((a, x) => a + x * x, 0));
  return n && norm > 0 ? Float32Array.from(sum, (x) => x / norm) : null;
}

function cosine(a: Float32Array, b: Float32Array): number {
  let dot = 0;
  for (let k = 0; k < a.length; k++) dot += a[k]! * b[k]!;
  return dot;
}

/** The window's other tracked narratives at least RELATED_MIN_SIMILARITY like `centroid`, most similar first. */
function relatedTo(gen: LoadedGeneration, self: Narrative, centroid: Float32Array | null, limit: number) {
  if (!centroid) return [];
  return gen.maps.narratives
    .filter((o) => o.narrative.window_key === self.window_key && o.narrative.id !== self.id && o.centroid?.length === centroid.length)
    .map((o) => ({ ...o.narrative, similarity: cosine(centroid, o.centroid!) }))
    .filter((o) => o.similarity >= RELATED_MIN_SIMILARITY)
    .sort((a, b) => b.similarity - a.similarity || a.id.localeCompare(b.id))
    .slice(0, limit);
}

export function relatedNarrativesRouter(emergent: EmergentStore): Router {
  const r = new Router<ApiState>();
  r.get('/narratives/:id/related', async (ctx) => {
    const gen = ctx.state.gen;
    const { limit } = queryFrom(relatedNarrativesQuery, ctx.query);
    const found = await resolveNarrative(gen, emergent, ctx.params.id!);
    const narrative = found.source === 'tracked' ? found.ln.narrative : found.e.narrative;
    const centroid = found.source === 'tracked' ? found.ln.centroid : meanOf(gen, found.e.members);
    ctx.body = {
      id: narrative.id,
      window_key: narrative.window_key,
      generation: gen.id,
      min_similarity: RELATED_MIN_SIMILARITY,
      items: relatedTo(gen, narrative, centroid, limit),
    };
  });
  return r;
}
