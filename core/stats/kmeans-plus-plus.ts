// The k-means++ start of every k-means in core/ (the maps' clustering, the stories, the incremental
// merge, the embedder fit's furniture step): plain maths on rows of numbers, below the folders that use it.
import { drawByWeight, seededRandom } from './seeded-random.ts';

/**
 * k-means++ seeding (Arthur & Vassilvitskii 2007) over typed rows, deterministic for a seed: each
 * next centre drawn with probability proportional to its squared distance from the nearest centre
 * so far. Passed to ml-kmeans as its initialization: ml-kmeans's own k-means++ copies a row array
 * for every distance it takes, which made seeding, not Lloyd's iterations, most of the run time.
 * With `initial` centres, those come first and the seeding continues from them.
 */
export function seedCentres(
  points: Float32Array,
  dim: number,
  idx: number[],
  k: number,
  seed: number,
  initial: readonly Float32Array[] = [],
): number[][] {
  const random = seededRandom(seed);
  const n = idx.length;
  const d2 = new Float64Array(n).fill(Infinity);
  const out: number[][] = initial.slice(0, k).map((c) => Array.from(c));
  const lower = (centre: ArrayLike<number>, at: number) => {
    let total = 0;
    for (let i = 0; i < n; i++) {
      const o = idx[i]! * dim;
      let s = 0;
      for (let j = 0; j < dim; j++) {
        const x = points[o + j]! - centre[at + j]!;
        s += x * x;
      }
      if (s < d2[i]!) d2[i] = s;
      total += d2[i]!;
    }
    return total;
  };
  let total = 0;
  for (const c of out) total = lower(c, 0);
  if (out.length === 0 && k > 0) {
    const first = idx[Math.floor(random() * n)]!;
    out.push(Array.from(points.subarray(first * dim, (first + 1) * dim)));
    total = lower(points, first * dim);
  }
  while (out.length < k) {
    const pick = drawByWeight(d2, total, random);
    const p = idx[pick]!;
    out.push(Array.from(points.subarray(p * dim, (p + 1) * dim)));
    total = lower(points, p * dim);
  }
  return out;
}
