// The project's one seeded random generator (mulberry32: a 32-bit state, period 2^32, fast and
// good enough for sampling and seeding): k-means++ draws (the pipeline's clustering and the search
// answer's draw the same rows for the same seed), the embedder's random projection, the fixture
// generator's streams.

/** Deterministic uniform 32-bit unsigned integers for a seed (mulberry32). */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), a | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (t ^ (t >>> 14)) >>> 0;
  };
}

/** Deterministic uniform [0, 1) numbers for a seed (mulberry32). */
export function seededRandom(seed: number): () => number {
  const next = mulberry32(seed);
  return () => next() / 4294967296;
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

/** 0..n-1 in a seeded random order (Fisher-Yates). */
export function shuffledOrder(n: number, seed: number): Uint32Array {
  const order = new Uint32Array(n);
  for (let i = 0; i < n; i++) order[i] = i;
  const random = seededRandom(seed);
  for (let i = n - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    const t = order[i]!;
    order[i] = order[j]!;
    order[j] = t;
  }
  return order;
}
