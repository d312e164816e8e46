// Deterministic draws for k-means++ seeding: the narratives' clustering (pipeline) and the search
// answer's clustering (kernel-kmeans.ts) draw the same rows for the same seed.

/** Deterministic uniform [0, 1) numbers for a seed (mulberry32). */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), a | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A position drawn with probability proportional to its weight (the k-means++ draw). */
export function drawByWeight(weights: Float64Array, total: number, random: () => number): number {
  let r = random() * total;
  for (let i = 0; i < weights.length; i++) {
    r -= weights[i]!;
    if (r <= 0) return i;
  }
  return weights.length - 1;
}
