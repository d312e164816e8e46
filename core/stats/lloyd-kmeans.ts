// Lloyd's k-means from given centres, written to give exactly what ml-kmeans's kmeans() gives for
// the same input (same assignments, same centres, same iterations: test/fast/lloyd-kmeans.test.ts holds it
// to that), in a fraction of its time. Written by hand because the narrative and pattern maps are
// the product's core and k-means was most of a first start's pipeline time: ml-kmeans takes a
// distance function per point and centre over arrays of arrays; this works on flat Float64Arrays
// and stops a distance early once it cannot win:
//   - each point starts from its previous centre's full distance, and a partial sum of squared
//     differences only grows, so once it passes the best so far the rest is skipped;
//   - ties go to the lowest centre index, as ml-kmeans's strict "<" scan from 0 gives them, so
//     the early stop never changes an assignment.
// Everything else (sums in data order, an empty cluster keeping its centre, convergence when no
// centre moved more than `tolerance` in squared distance) is ml-kmeans's own rule.
import { assert, assertInt } from '../infra/assert.ts';

interface LloydResult {
  /** Per point: its cluster 0..k-1. */
  clusters: Int32Array;
  /** k x dim. */
  centroids: Float64Array;
  iterations: number;
  converged: boolean;
}

/** Squared Euclidean distance of point `po` and centre `co`, or a value > `stopAbove` once it exceeds it. */
function distanceUpTo(x: Float64Array, po: number, c: Float64Array, co: number, dim: number, stopAbove: number): number {
  let d = 0;
  let j = 0;
  // The test every 8 terms: per term it cost as much as it saved. The sum's order is unchanged.
  for (; j + 8 <= dim; j += 8) {
    const t0 = x[po + j]! - c[co + j]!;
    d += t0 * t0;
    const t1 = x[po + j + 1]! - c[co + j + 1]!;
    d += t1 * t1;
    const t2 = x[po + j + 2]! - c[co + j + 2]!;
    d += t2 * t2;
    const t3 = x[po + j + 3]! - c[co + j + 3]!;
    d += t3 * t3;
    const t4 = x[po + j + 4]! - c[co + j + 4]!;
    d += t4 * t4;
    const t5 = x[po + j + 5]! - c[co + j + 5]!;
    d += t5 * t5;
    const t6 = x[po + j + 6]! - c[co + j + 6]!;
    d += t6 * t6;
    const t7 = x[po + j + 7]! - c[co + j + 7]!;
    d += t7 * t7;
    if (d > stopAbove) return d;
  }
  for (; j < dim; j++) {
    const t = x[po + j]! - c[co + j]!;
    d += t * t;
  }
  return d;
}

/**
 * k-means on `n` points of `dim` (row-major `x`) from `initial` centres (k x dim), at most
 * `maxIterations` steps, converged when every centre moved at most `tolerance` (squared distance).
 */
export function lloydKMeans(x: Float64Array, dim: number, initial: Float64Array, maxIterations: number, tolerance: number): LloydResult {
  assertInt(dim, 1, 1 << 16, 'dim');
  assert(
    x.length % dim === 0 && initial.length % dim === 0,
    () => `${x.length} values and ${initial.length} centre values are not whole rows of ${dim}`,
  );
  const n = x.length / dim;
  const k = initial.length / dim;
  assert(k >= 1, 'at least one centre');
  let centres = Float64Array.from(initial);
  let next = new Float64Array(centres.length);
  const clusters = new Int32Array(n).fill(-1);
  const sizes = new Uint32Array(k);
  let iterations = 0;
  let converged = false;
  while (!converged && iterations < maxIterations) {
    iterations++;
    for (let i = 0; i < n; i++) {
      const po = i * dim;
      const prev = clusters[i]!;
      let best = -1;
      let bestD = Infinity;
      if (prev >= 0) {
        best = prev;
        bestD = distanceUpTo(x, po, centres, prev * dim, dim, Infinity);
      }
      for (let c = 0; c < k; c++) {
        if (c === prev) continue;
        // Stopped only once strictly above the best: an equal distance may still win on its lower index.
        const d = distanceUpTo(x, po, centres, c * dim, dim, bestD);
        if (d < bestD || (d === bestD && c < best)) ((best = c), (bestD = d));
      }
      // ml-kmeans starts its scan at Number.MAX_VALUE: a point whose distances are all infinite or NaN gets -1 there; keep 0 here.
      clusters[i] = best < 0 ? 0 : best;
    }
    next.fill(0);
    sizes.fill(0);
    for (let i = 0; i < n; i++) {
      const c = clusters[i]!;
      sizes[c]!++;
      const po = i * dim;
      const co = c * dim;
      for (let j = 0; j < dim; j++) next[co + j]! += x[po + j]!;
    }
    for (let c = 0; c < k; c++) {
      const co = c * dim;
      if (sizes[c]) for (let j = 0; j < dim; j++) next[co + j]! /= sizes[c]!;
      else for (let j = 0; j < dim; j++) next[co + j] = centres[co + j]!;
    }
    converged = true;
    for (let c = 0; c < k && converged; c++)
      if (distanceUpTo(next, c * dim, centres, c * dim, dim, Infinity) > tolerance) converged = false;
    [centres, next] = [next, centres];
  }
  return { clusters, centroids: centres, iterations, converged };
}
