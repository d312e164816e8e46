// core/stats/lloyd-kmeans.ts against ml-kmeans, its reference: the same assignments, the same
// centres to the last bit and the same number of iterations, on clustered data, on data full of
// exact ties (duplicate points, quantised values), with clusters that empty out, and on the
// real thing (the committed sample's text vectors are not needed: random unit vectors in 128
// dimensions stand in for them).
import fc from 'fast-check';
import { kmeans } from 'ml-kmeans';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { lloydKMeans } from '../../core/stats/lloyd-kmeans.ts';
import { seededRandom } from '../../core/stats/seeded-random.ts';

function compare(x: Float64Array, dim: number, init: Float64Array, maxIterations: number, tolerance: number): void {
  const n = x.length / dim;
  const k = init.length / dim;
  const rows = Array.from({ length: n }, (_, i) => Array.from(x.subarray(i * dim, (i + 1) * dim)));
  const start = Array.from({ length: k }, (_, c) => Array.from(init.subarray(c * dim, (c + 1) * dim)));
  const ref = kmeans(rows, k, { initialization: start, maxIterations, tolerance });
  const mine = lloydKMeans(x, dim, init, maxIterations, tolerance);
  assert.equal(Array.from(mine.clusters), ref.clusters, `assignments (n ${n}, dim ${dim}, k ${k})`);
  assert.equal(Array.from(mine.centroids), ref.centroids.flat(), 'centres, bit for bit');
  assert.is(mine.iterations, ref.iterations);
  assert.is(mine.converged, ref.converged);
}

test('the same result as ml-kmeans on clustered unit vectors (128 dims, k up to 60)', () => {
  const rnd = seededRandom(3);
  for (const [n, k] of [
    [500, 5],
    [1500, 30],
    [2000, 60],
  ] as const) {
    const dim = 128;
    const centres = Array.from({ length: k }, () => Array.from({ length: dim }, () => rnd() - 0.5));
    const x = new Float64Array(n * dim);
    for (let i = 0; i < n; i++) {
      let norm = 0;
      for (let j = 0; j < dim; j++) norm += (x[i * dim + j] = Math.fround(centres[i % k]![j]! + (rnd() - 0.5) * 0.6)) ** 2;
      for (let j = 0; j < dim; j++) x[i * dim + j] = Math.fround(x[i * dim + j]! / Math.sqrt(norm));
    }
    const init = new Float64Array(k * dim);
    for (let c = 0; c < k; c++) init.set(x.subarray(((c * 37) % n) * dim, (((c * 37) % n) + 1) * dim), c * dim);
    compare(x, dim, init, 40, 1e-4);
  }
});

test('ties, duplicates and clusters that empty out: the same choices as ml-kmeans', () => {
  fc.assert(
    fc.property(
      fc.integer({ min: 1, max: 6 }),
      fc.integer({ min: 2, max: 8 }),
      fc.integer({ min: 9, max: 60 }),
      fc.integer({ min: 0, max: 1e6 }),
      (dim, k, n, seed) => {
        const rnd = seededRandom(seed);
        // ml-kmeans wants more points than centres (n >= 9 > k). Values on a coarse grid: many points coincide and many distances are exactly equal.
        const x = Float64Array.from({ length: n * dim }, () => Math.round(rnd() * 3) / 2);
        // Some starting centres repeat and some sit far from every point (they lose all members).
        const init = Float64Array.from({ length: k * dim }, (_, i) => (i % 3 === 0 ? 9 : Math.round(rnd() * 3) / 2));
        compare(x, dim, init, 25, 1e-6);
      },
    ),
    { numRuns: 400, seed: 11 },
  );
});

test.run();
