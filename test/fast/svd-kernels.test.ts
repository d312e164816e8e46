// The randomized SVD's loops (core/vectors/svd-kernels.ts) against the plain one-row-at-a-time loops they
// replaced, bit for bit: the blocked kernels must add the same products in the same order, so a
// fitted model's bytes (and version) do not change. Sizes that are and are not multiples of the
// blocks (4 rows, 2 columns, 4 entries), rows and columns of zeros, an upper-triangular factor.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { SparseRow } from '../../core/vectors/word-space.ts';
import { gram, orthonormalise, rowsTimes, sparseTimesDense, transposeRows } from '../../core/vectors/svd-kernels.ts';

let seed = 11;
const rand = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
// Magnitudes over six decades, so that summing in another order rounds differently somewhere.
const value = () => (rand() * 2 - 1) * 10 ** (rand() * 6 - 3);

/** Dense n x l (values of any sign and magnitude) with a quarter of the entries zero and every fifth row all zero. */
function dense(n: number, l: number): Float64Array {
  const a = new Float64Array(n * l);
  for (let r = 0; r < n; r++) for (let c = 0; c < l; c++) a[r * l + c] = r % 5 === 3 || rand() < 0.25 ? 0 : value();
  return a;
}

function sparse(n: number, columns: number): SparseRow[] {
  return Array.from({ length: n }, (_, r) => {
    const cols = [...new Set(Array.from({ length: r % 7 === 2 ? 0 : 1 + Math.floor(rand() * 9) }, () => Math.floor(rand() * columns)))];
    return { idx: Uint32Array.from(cols), val: Float32Array.from(cols, value) };
  });
}

const same = (a: Float64Array, b: Float64Array, what: string) =>
  assert.ok(Buffer.from(a.buffer).equals(Buffer.from(b.buffer)), `${what}: not bit for bit the plain loop's`);

// The loops as they were, one row (one entry) at a time.
function plainSparseTimesDense(rows: SparseRow[], b: Float64Array, l: number): Float64Array {
  const y = new Float64Array(rows.length * l);
  rows.forEach((r, i) =>
    r.idx.forEach((k, j) => {
      for (let c = 0; c < l; c++) y[i * l + c]! += r.val[j]! * b[k * l + c]!;
    }),
  );
  return y;
}
function plainTransposeTimesDense(rows: SparseRow[], y: Float64Array, l: number, columns: number): Float64Array {
  const z = new Float64Array(columns * l);
  rows.forEach((r, i) =>
    r.idx.forEach((k, j) => {
      for (let c = 0; c < l; c++) z[k * l + c]! += r.val[j]! * y[i * l + c]!;
    }),
  );
  return z;
}
function plainGram(a: Float64Array, n: number, l: number): Float64Array {
  const g = new Float64Array(l * l);
  for (let r = 0; r < n; r++)
    for (let i = 0; i < l; i++) {
      if (a[r * l + i] === 0) continue;
      for (let j = i; j < l; j++) g[i * l + j]! += a[r * l + i]! * a[r * l + j]!;
    }
  for (let i = 0; i < l; i++) for (let j = 0; j < i; j++) g[i * l + j] = g[j * l + i]!;
  return g;
}
function plainRowsTimes(a: Float64Array, n: number, l: number, t: Float64Array, m: number, upper: boolean): Float64Array {
  const out = new Float64Array(n * m);
  for (let r = 0; r < n; r++)
    for (let k = 0; k < l; k++) {
      if (a[r * l + k] === 0) continue;
      for (let j = upper ? k : 0; j < m; j++) out[r * m + j]! += a[r * l + k]! * t[k * m + j]!;
    }
  return out;
}

test('sparseTimesDense and the product on transposeRows: bit for bit the plain products X B and X^T Y', () => {
  for (const [n, columns, l] of [
    [1, 3, 5],
    [37, 50, 9],
    [203, 120, 16],
  ] as const) {
    const rows = sparse(n, columns);
    const b = dense(columns, l);
    same(sparseTimesDense(rows, b, l), plainSparseTimesDense(rows, b, l), `X B, ${n} rows`);
    const y = dense(n, l);
    const cols = transposeRows(rows, columns);
    assert.is(cols.length, columns);
    same(sparseTimesDense(cols, y, l), plainTransposeTimesDense(rows, y, l, columns), `X^T Y, ${n} rows`);
  }
});

test('gram: bit for bit the plain A^T A, for row counts on and off the four-row block', () => {
  for (const [n, l] of [
    [1, 4],
    [4, 3],
    [7, 6],
    [130, 17],
  ] as const) {
    const a = dense(n, l);
    same(gram(a, n, l), plainGram(a, n, l), `${n} x ${l}`);
  }
});

test('rowsTimes: bit for bit the plain x T, full and upper triangular, odd and even widths, in place', () => {
  for (const [n, l, m] of [
    [1, 5, 5],
    [6, 4, 7],
    [9, 8, 3],
    [130, 17, 17],
  ] as const) {
    const a = dense(n, l);
    const t = dense(l, m);
    const out = new Float64Array(n * m);
    rowsTimes(a, n, l, t, m, out);
    same(out, plainRowsTimes(a, n, l, t, m, false), `full ${n} x ${l} x ${m}`);
    const upper = t.map((v, i) => (i % m >= Math.floor(i / m) ? v : 0));
    rowsTimes(a, n, l, upper, m, out, true);
    same(out, plainRowsTimes(a, n, l, upper, m, true), `upper ${n} x ${l} x ${m}`);
    if (m === l) {
      const b = a.slice();
      rowsTimes(b, n, l, upper, m, b, true);
      same(b, plainRowsTimes(a, n, l, upper, m, true), `in place ${n} x ${l}`);
    }
  }
});

test('orthonormalise: orthonormal columns spanning the input; a dependent column zeroed', () => {
  const n = 61;
  const l = 6;
  const a = dense(n, l);
  for (let r = 0; r < n; r++) a[r * l + 5] = 2 * a[r * l + 1]! - a[r * l + 2]!;
  orthonormalise(a, n, l);
  const g = plainGram(a, n, l);
  for (let i = 0; i < l; i++)
    for (let j = 0; j < l; j++) {
      const want = i === j && i !== 5 ? 1 : 0;
      assert.ok(Math.abs(g[i * l + j]! - want) < 1e-9, `Q^T Q [${i}, ${j}] = ${g[i * l + j]}`);
    }
});

test.run();
