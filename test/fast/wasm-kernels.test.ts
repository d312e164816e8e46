// The WebAssembly kernels: every committed binary is its text module compiled afresh (npm run
// wasm), and the float32 dots kernel (core/vectors/f32-dots.ts, the chance floor's) gives each
// row's inner product with a query as float64 arithmetic does, to float32 rounding, for widths that
// are and are not a multiple of its 4-float step, and for several row sets held at once; its nearest
// centre of each row is the float64 argmax (the first of equal centres), across its chunks.
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { F32Nearest, F32Rows } from '../../core/vectors/f32-dots.ts';
import { dot } from '../../core/vectors/dot.ts';
import { seededRandom } from '../../core/stats/seeded-random.ts';
import { compileWat, WAT_FILES } from '../../tools/build-wasm.ts';
import { ROOT } from '../helpers/child.ts';

test('each committed .wasm is its .wat compiled', async () => {
  assert.ok(WAT_FILES.length >= 2);
  for (const rel of WAT_FILES) {
    const wat = path.join(ROOT, rel);
    const built = await compileWat(wat);
    assert.ok(Buffer.from(fs.readFileSync(wat.replace(/\.wat$/, '.wasm'))).equals(Buffer.from(built)), `${rel}: run npm run wasm`);
  }
});

test("F32Rows: each row's dot with the query, as float64 sums give it", () => {
  const u = seededRandom(11);
  const sets = [
    [2000, 128],
    [7, 130],
    [1, 3],
    [0, 128],
  ].map(([n, dim]) => {
    const rows = Float32Array.from({ length: n! * dim! }, () => u() * 2 - 1);
    return { n: n!, dim: dim!, rows, kernel: new F32Rows(rows, dim!) };
  });
  for (let trial = 0; trial < 3; trial++)
    for (const { n, dim, rows, kernel } of sets) {
      const q = Array.from({ length: dim }, () => u() * 2 - 1);
      const out = new Float64Array(n);
      kernel.dotsInto(q, out);
      for (let i = 0; i < n; i++) {
        let exact = 0;
        let scale = 0;
        for (let c = 0; c < dim; c++) ((exact += rows[i * dim + c]! * Math.fround(q[c]!)), (scale += Math.abs(rows[i * dim + c]! * q[c]!)));
        assert.ok(Math.abs(out[i]! - exact) <= 1e-6 * scale + 1e-7, `${n}x${dim} row ${i}: ${out[i]} against ${exact}`);
      }
    }
});

test("F32Nearest: each row's nearest centre, as float64 dot products pick it", () => {
  const u = seededRandom(21);
  for (const [n, k, dim] of [
    [10_000, 200, 128],
    [300, 7, 30],
    [5, 1, 4],
  ] as const) {
    const vectors = Float32Array.from({ length: (n + 3) * dim }, () => u() * 2 - 1);
    const centres = Float32Array.from({ length: k * dim }, () => u() * 2 - 1);
    // A centre written twice: its rows go to the first copy.
    if (k > 2) centres.copyWithin((k - 1) * dim, dim, 2 * dim);
    const rows = Array.from({ length: n }, (_, i) => (i * 7) % (n + 3));
    const got = new Int32Array(n);
    new F32Nearest(centres, dim).nearestInto(vectors, rows, got);
    let differ = 0;
    for (let i = 0; i < n; i++) {
      let best = 0;
      let bs = -Infinity;
      let second = -Infinity;
      for (let c = 0; c < k; c++) {
        const s = dot(vectors, rows[i]! * dim, centres, c * dim, dim);
        if (s > bs) ((second = bs), (bs = s), (best = c));
        else if (s > second && s < bs) second = s;
      }
      assert.ok(k < 3 || got[i] !== k - 1, 'the first of two equal centres');
      // float32 sums may only reorder centres closer than their rounding.
      if (got[i] !== best) {
        differ++;
        assert.ok(bs - dot(vectors, rows[i]! * dim, centres, got[i]! * dim, dim) < 1e-5, `${n}x${k}x${dim} row ${i}`);
      }
    }
    assert.ok(differ <= n / 1000, `${differ} of ${n} rows elsewhere than the float64 argmax`);
  }
});

test.run();
