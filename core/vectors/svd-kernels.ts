// The loops of the embedder's randomized SVD (core/vectors/embedder.ts): sparse x dense products, the Gram
// matrix, CholeskyQR2 and a dense row product. They were most of a fit's time (the first start's
// longest step), so each dense loop works on four rows at once: a value loaded from the shared
// operand (a row of R^-1, of the Gram matrix, of U) serves four rows before the next load. Every
// output element still receives the same products in the same order as one row at a time (the
// four are added left to right, and a skipped zero adds nothing), so the results are bit for bit
// those of the plain loops: a model's bytes, and its version, do not depend on this blocking.

import type { SparseRow } from './word-space.ts';

/**
 * Y (rows x l) = X (sparse rows) * B (buckets x l), four of a row's entries a pass over Y's row.
 * X^T * Y is this product on X's columns (transposeRows): a gather into each output row, where
 * a scatter over X's rows wrote all over the output; each element sums the same terms in the same
 * (row) order either way.
 */
export function sparseTimesDense(rows: readonly SparseRow[], b: Float64Array, l: number): Float64Array {
  const y = new Float64Array(rows.length * l);
  for (let i = 0; i < rows.length; i++) {
    const { idx, val } = rows[i]!;
    const o = i * l;
    const n = idx.length;
    let j = 0;
    for (; j + 3 < n; j += 4) {
      const b0 = idx[j]! * l;
      const b1 = idx[j + 1]! * l;
      const b2 = idx[j + 2]! * l;
      const b3 = idx[j + 3]! * l;
      const v0 = val[j]!;
      const v1 = val[j + 1]!;
      const v2 = val[j + 2]!;
      const v3 = val[j + 3]!;
      for (let c = 0; c < l; c++) y[o + c] = y[o + c]! + v0 * b[b0 + c]! + v1 * b[b1 + c]! + v2 * b[b2 + c]! + v3 * b[b3 + c]!;
    }
    for (; j < n; j++) {
      const b0 = idx[j]! * l;
      const v0 = val[j]!;
      for (let c = 0; c < l; c++) y[o + c]! += v0 * b[b0 + c]!;
    }
  }
  return y;
}

/** X's columns as sparse rows (`columns` of them), each listing its rows in ascending order. */
export function transposeRows(rows: readonly SparseRow[], columns: number): SparseRow[] {
  const count = new Uint32Array(columns);
  for (const r of rows) for (let j = 0; j < r.idx.length; j++) count[r.idx[j]!]!++;
  const cols = Array.from({ length: columns }, (_, c) => ({ idx: new Uint32Array(count[c]!), val: new Float32Array(count[c]!) }));
  const fill = new Uint32Array(columns);
  rows.forEach((r, i) => {
    for (let j = 0; j < r.idx.length; j++) {
      const c = r.idx[j]!;
      cols[c]!.idx[fill[c]!] = i;
      cols[c]!.val[fill[c]!++] = r.val[j]!;
    }
  });
  return cols;
}

/** G = A^T A (l x l) for row-major A (n x l), accumulated four rows at a time in row order. */
export function gram(a: Float64Array, n: number, l: number): Float64Array {
  const g = new Float64Array(l * l);
  let r = 0;
  for (; r + 3 < n; r += 4) {
    const o0 = r * l;
    const o1 = o0 + l;
    const o2 = o1 + l;
    const o3 = o2 + l;
    for (let i = 0; i < l; i++) {
      const v0 = a[o0 + i]!;
      const v1 = a[o1 + i]!;
      const v2 = a[o2 + i]!;
      const v3 = a[o3 + i]!;
      if (v0 === 0 && v1 === 0 && v2 === 0 && v3 === 0) continue;
      const gi = i * l;
      for (let j = i; j < l; j++) g[gi + j] = g[gi + j]! + v0 * a[o0 + j]! + v1 * a[o1 + j]! + v2 * a[o2 + j]! + v3 * a[o3 + j]!;
    }
  }
  for (; r < n; r++) {
    const o = r * l;
    for (let i = 0; i < l; i++) {
      const v = a[o + i]!;
      if (v === 0) continue;
      const gi = i * l;
      for (let j = i; j < l; j++) g[gi + j]! += v * a[o + j]!;
    }
  }
  for (let i = 0; i < l; i++) for (let j = 0; j < i; j++) g[i * l + j] = g[j * l + i]!;
  return g;
}

/**
 * Each row x of a (n x l, row-major) becomes x T for T (l x m, row-major), into out (n x m; may be
 * a itself when m = l). With `upper`, T is upper triangular (zeros below the diagonal) and column
 * j sums rows 0..j only. Every output element is a dot product of x and a column of T, summed in
 * row order (as accumulating x_k T[k] for k = 0, 1, ... does), on four rows and two columns at once
 * in eight running sums that stay in registers.
 */
export function rowsTimes(a: Float64Array, n: number, l: number, t: Float64Array, m: number, out: Float64Array, upper = false): void {
  // T's columns as contiguous rows.
  const tt = new Float64Array(m * l);
  for (let k = 0; k < l; k++) for (let j = 0; j < m; j++) tt[j * l + k] = t[k * m + j]!;
  const block = new Float64Array(4 * m);
  for (let r = 0; r < n; r += 4) {
    const rows = Math.min(4, n - r);
    // Past the last row a block repeats its first, whose extra sums are never written out.
    const o0 = r * l;
    const o1 = rows > 1 ? o0 + l : o0;
    const o2 = rows > 2 ? o0 + 2 * l : o0;
    const o3 = rows > 3 ? o0 + 3 * l : o0;
    let j = 0;
    for (; j + 1 < m; j += 2) {
      const ta = j * l;
      const tb = ta + l;
      // Column j's term at row j + 1 is T's zero below the diagonal: it adds nothing.
      const end = upper ? Math.min(l, j + 2) : l;
      let s0 = 0;
      let s1 = 0;
      let s2 = 0;
      let s3 = 0;
      let u0 = 0;
      let u1 = 0;
      let u2 = 0;
      let u3 = 0;
      for (let k = 0; k < end; k++) {
        const wa = tt[ta + k]!;
        const wb = tt[tb + k]!;
        const x0 = a[o0 + k]!;
        const x1 = a[o1 + k]!;
        const x2 = a[o2 + k]!;
        const x3 = a[o3 + k]!;
        s0 += x0 * wa;
        s1 += x1 * wa;
        s2 += x2 * wa;
        s3 += x3 * wa;
        u0 += x0 * wb;
        u1 += x1 * wb;
        u2 += x2 * wb;
        u3 += x3 * wb;
      }
      block[j] = s0;
      block[m + j] = s1;
      block[2 * m + j] = s2;
      block[3 * m + j] = s3;
      block[j + 1] = u0;
      block[m + j + 1] = u1;
      block[2 * m + j + 1] = u2;
      block[3 * m + j + 1] = u3;
    }
    for (; j < m; j++) {
      const ta = j * l;
      const end = upper ? Math.min(l, j + 1) : l;
      let s0 = 0;
      let s1 = 0;
      let s2 = 0;
      let s3 = 0;
      for (let k = 0; k < end; k++) {
        const wa = tt[ta + k]!;
        s0 += a[o0 + k]! * wa;
        s1 += a[o1 + k]! * wa;
        s2 += a[o2 + k]! * wa;
        s3 += a[o3 + k]! * wa;
      }
      block[j] = s0;
      block[m + j] = s1;
      block[2 * m + j] = s2;
      block[3 * m + j] = s3;
    }
    for (let q = 0; q < rows; q++) out.set(block.subarray(q * m, (q + 1) * m), (r + q) * m);
  }
}

/**
 * Orthonormalise the l columns of a (n x l, row-major) in place by CholeskyQR2 (Fukaya et al.):
 * A = Q R with R from the Cholesky factor of A^T A, done twice for stability. Row-major passes
 * only, which is what makes it fast in JS; columns that are (numerically) dependent are zeroed.
 */
export function orthonormalise(a: Float64Array, n: number, l: number): void {
  for (let pass = 0; pass < 2; pass++) {
    const g = gram(a, n, l);
    // Cholesky: g = R^T R, R upper triangular, stored in g's upper triangle.
    const rdiag = new Float64Array(l);
    for (let j = 0; j < l; j++) {
      let d = g[j * l + j]!;
      for (let k = 0; k < j; k++) d -= g[k * l + j]! ** 2;
      const ok = d > 1e-10 * (g[j * l + j]! || 1);
      rdiag[j] = ok ? Math.sqrt(d) : 0;
      for (let i = j + 1; i < l; i++) {
        let v = g[j * l + i]!;
        for (let k = 0; k < j; k++) v -= g[k * l + j]! * g[k * l + i]!;
        g[j * l + i] = ok ? v / rdiag[j]! : 0;
      }
      g[j * l + j] = rdiag[j]!;
    }
    // R^{-1} (upper triangular) once, by back substitution on the identity; then each row x of A
    // becomes x R^{-1}, accumulated along contiguous rows of R^{-1} (a dependent recurrence over
    // R's columns per row was most of the fit's time at 40k rows).
    const inv = new Float64Array(l * l);
    for (let j = 0; j < l; j++) {
      if (rdiag[j] === 0) continue;
      inv[j * l + j] = 1 / rdiag[j]!;
      for (let i = j - 1; i >= 0; i--) {
        if (rdiag[i] === 0) continue;
        let v = 0;
        for (let k = i + 1; k <= j; k++) v += g[i * l + k]! * inv[k * l + j]!;
        inv[i * l + j] = -v / rdiag[i]!;
      }
    }
    rowsTimes(a, n, l, inv, l, a, true);
  }
}
