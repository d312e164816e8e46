// Scores the pipeline computes from a post's text-embedding neighbours (cosine similarities,
// nominally -1..1) and from the enrichment's own confidences. All results are in 0..1.

function clamp01(x: number): number {
  return x < 0 ? 0 : x > 1 ? 1 : x;
}

/**
 * noveltyScore = 1 - max(0, max similarity to an earlier similar post); 1 when there is none.
 * "Earlier" (published before the post) is the caller's filter. Non-finite similarities are ignored.
 */
export function noveltyScore(similaritiesToEarlierNeighbours: number[]): number {
  const s = similaritiesToEarlierNeighbours.filter(Number.isFinite);
  if (s.length === 0) return 1;
  return clamp01(1 - Math.max(0, ...s));
}

/**
 * saturationScore = (neighbours with similarity >= threshold) / (number of neighbours): the share of
 * near-duplicates among the post's k nearest neighbours; 0 when it has no neighbours. 0.95: in the
 * word space (core/vectors/word-space.ts) posts of one story reach 0.9 without repeating each other (on the
 * sample, originals' mean saturation at 0.9 was 0.30, copies' 0.15; at 0.95, 0.05 and 0.12).
 */
export function saturationScore(neighbourSimilarities: number[], threshold = 0.95): number {
  const s = neighbourSimilarities.filter(Number.isFinite);
  if (s.length === 0) return 0;
  return s.filter((x) => x >= threshold).length / s.length;
}

/** A confidence in 0..1 with an optional weight (default 1); null/undefined parts were not computed. */
type ConfidencePart = number | { confidence: number; weight: number } | null | undefined;

/**
 * attributeConfidence = weighted mean of the confidences of the attribute extractors that produced
 * output for the post (each clamped to 0..1; weights >= 0, default 1); null when none did.
 * enrichText passes the emotion confidence and, when brands matched, BRAND_MATCH_CONFIDENCE; the
 * pipeline adds the visual style's confidence for `aestheticStyle` through the same function.
 */
export function attributeConfidence(parts: Record<string, ConfidencePart> | ConfidencePart[]): number | null {
  let num = 0;
  let den = 0;
  for (const p of Array.isArray(parts) ? parts : Object.values(parts)) {
    if (p === null || p === undefined) continue;
    const c = typeof p === 'number' ? p : p.confidence;
    const w = typeof p === 'number' ? 1 : Math.max(0, p.weight);
    if (!Number.isFinite(c) || !Number.isFinite(w) || w === 0) continue;
    num += w * clamp01(c);
    den += w;
  }
  return den > 0 ? num / den : null;
}
