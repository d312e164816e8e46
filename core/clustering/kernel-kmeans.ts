// k-means in kernel form over the rows' Gram matrix G (inner products), for the few hundred rows
// of one search answer, where it runs once per request. Written by hand because it is the
// per-request core: ml-kmeans (the pipeline's engine) works on arrays of arrays in the vectors'
// dimension, which cost more than the clustering itself at this size.
//
// For unit vectors and squared Euclidean distance (Lloyd's algorithm, as ml-kmeans):
//   |x_i - mean(C)|^2 = G_ii - 2 A_ic / m_c + W_c / m_c^2,
//   A_ic = sum_{j in C} G_ij,   W_c = sum_{i,j in C} G_ij,   m_c = |C|,
// so once G is known nothing depends on the dimension. A is kept up to date per moved point
// (n additions for each row that changes cluster) instead of rebuilt (n^2) every iteration, and it
// also gives the silhouette (cosine distance 1 - G) and each row's cosine to its centroid
// (A_ic / sqrt(W_c)) without another pass over the vectors.
import { drawByWeight, seededRandom } from '../stats/seeded-random.ts';

/**
 * k-means++ seeding (Arthur & Vassilvitskii 2007) on G: the same draws as the pipeline's
 * seedCentres on the vectors (squared distances G_ii + G_pp - 2 G_ip), n steps per centre instead
 * of n x dim. Returns the chosen positions (rows of G).
 */
export function seedPositions(G: Float64Array, n: number, k: number, seed: number): number[] {
  const random = seededRandom(seed);
  const d2 = new Float64Array(n).fill(Infinity);
  const out: number[] = [];
  let total = 0;
  const lower = (p: number) => {
    total = 0;
    for (let i = 0; i < n; i++) {
      const d = Math.max(0, G[i * n + i]! + G[p * n + p]! - 2 * G[i * n + p]!);
      if (d < d2[i]!) d2[i] = d;
      total += d2[i]!;
    }
  };
  if (k > 0 && n > 0) {
    out.push(Math.floor(random() * n));
    lower(out[0]!);
  }
  while (out.length < k) {
    const pick = drawByWeight(d2, total, random);
    out.push(pick);
    lower(pick);
  }
  return out;
}

/** Lloyd's k-means on G from rows as starting centres; a cluster that loses all its rows stays empty. */
export class KernelKMeans {
  readonly k: number;
  readonly clusters: Int32Array;
  readonly size: Uint32Array;
  /** n x k: A_ic, the sum of G_ij over the rows j of cluster c. */
  private readonly A: Float64Array;
  private readonly W: Float64Array;

  constructor(
    private readonly G: Float64Array,
    private readonly n: number,
    starts: readonly number[],
  ) {
    const k = (this.k = starts.length);
    this.clusters = new Int32Array(n);
    this.size = new Uint32Array(k);
    this.A = new Float64Array(n * k);
    this.W = new Float64Array(k);
    // Each row to its nearest start row: |x_i - x_p|^2 = G_ii + G_pp - 2 G_ip (G_ii is the same for every p).
    for (let i = 0; i < n; i++) {
      let best = 0;
      let bd = Infinity;
      starts.forEach((p, c) => {
        const d = G[p * n + p]! - 2 * G[i * n + p]!;
        if (d < bd) ((bd = d), (best = c));
      });
      this.clusters[i] = best;
      this.size[best]!++;
    }
    for (let i = 0; i < n; i++) {
      const row = i * n;
      const out = i * k;
      for (let j = 0; j < n; j++) this.A[out + this.clusters[j]!]! += G[row + j]!;
    }
    this.updateW();
  }

  private updateW(): void {
    this.W.fill(0);
    for (let i = 0; i < this.n; i++) this.W[this.clusters[i]!]! += this.A[i * this.k + this.clusters[i]!]!;
  }

  /** Lloyd iterations (all rows reassigned against the current means, then moved) until none moves; returns the iterations run. */
  iterate(maxIterations: number): number {
    const { G, n, k, A, W, size, clusters } = this;
    const next = new Int32Array(n);
    for (let it = 0; it < maxIterations; it++) {
      let moved = 0;
      for (let i = 0; i < n; i++) {
        let best = clusters[i]!;
        let bd = Infinity;
        for (let c = 0; c < k; c++) {
          const m = size[c]!;
          if (m === 0) continue;
          const d = G[i * n + i]! - (2 * A[i * k + c]!) / m + W[c]! / (m * m);
          if (d < bd - 1e-12) ((bd = d), (best = c));
        }
        next[i] = best;
        if (best !== clusters[i]) moved++;
      }
      if (moved === 0) return it;
      for (let j = 0; j < n; j++) {
        const from = clusters[j]!;
        const to = next[j]!;
        if (from === to) continue;
        const row = j * n;
        for (let i = 0; i < n; i++) {
          const g = G[row + i]!;
          A[i * k + from]! -= g;
          A[i * k + to]! += g;
        }
        size[from]!--;
        size[to]!++;
        clusters[j] = to;
      }
      this.updateW();
    }
    return maxIterations;
  }

  /**
   * Mean silhouette (Rousseeuw 1987) on cosine distance 1 - G, as the pipeline's silhouette(): for
   * row i in cluster o, a = mean distance to the other rows of o, b = smallest mean distance to
   * another non-empty cluster, s = (b - a) / max(a, b); 0 for a row alone in its cluster.
   */
  silhouette(): number {
    const { G, n, k, A, size, clusters } = this;
    let total = 0;
    for (let i = 0; i < n; i++) {
      const own = clusters[i]!;
      const ownCount = size[own]! - 1;
      if (ownCount === 0) continue;
      const a = (ownCount - (A[i * k + own]! - G[i * n + i]!)) / ownCount;
      let b = Infinity;
      for (let c = 0; c < k; c++) if (c !== own && size[c]! > 0) b = Math.min(b, (size[c]! - A[i * k + c]!) / size[c]!);
      if (b === Infinity) continue;
      total += (b - a) / Math.max(a, b, 1e-12);
    }
    return n ? total / n : 0;
  }

  /** Cosine of row i to the unit-length mean of cluster c (A_ic / sqrt(W_c)); -Infinity for an empty cluster. */
  cosineToCentroid(i: number, c: number): number {
    const w = this.W[c]!;
    return this.size[c]! === 0 || w <= 0 ? -Infinity : this.A[i * this.k + c]! / Math.sqrt(w);
  }
}
