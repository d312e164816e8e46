// The directions every post shares, in a fitted text space: the mean direction of posts' unit
// vectors and the top principal directions around it. Real tweets crowd into a narrow cone (the
// mean of 20,000 tweets' unit vectors is 0.63 long: two random tweets are ~0.4 alike), and the
// spread they do have is mostly along a couple of directions of everyday talk. A vector built
// from posts (a folded word: core/vectors/fold-in.ts) takes these away, as "All-but-the-Top"
// post-processes word vectors (Mu and Viswanath 2018: the mean and the top D components), so it
// points at what its posts have in common beyond what all posts have.
import { EigenvalueDecomposition, Matrix } from 'ml-matrix';

/** Principal directions taken away besides the mean: D = 2 for 128 dimensions (the paper's d/100, rounded up). */
const COMMON_COMPONENTS = 2;

/**
 * `n` unit vectors (row-major, `dim` each; zero rows left out) -> the mean's direction and the top
 * `components` principal directions of the vectors around the mean, as orthonormal rows.
 */
export function commonDirections(vectors: Float32Array, dim: number, components = COMMON_COMPONENTS): Float32Array {
  const rows: number[][] = [];
  for (let o = 0; o + dim <= vectors.length; o += dim) {
    const v = vectors.subarray(o, o + dim);
    if (v.some((x) => x !== 0)) rows.push(Array.from(v));
  }
  if (rows.length < 2) return new Float32Array(0);
  const x = new Matrix(rows);
  const mean = x.mean('column');
  const centred = x.subRowVector(mean);
  const cov = centred.transpose().mmul(centred).div(rows.length);
  const evd = new EigenvalueDecomposition(cov, { assumeSymmetric: true });
  const order = evd.realEigenvalues
    .map((v, i) => [v, i] as const)
    .sort((a, b) => b[0] - a[0] || a[1] - b[1])
    .slice(0, components);
  const candidates = [mean, ...order.map(([, i]) => evd.eigenvectorMatrix.getColumn(i))];
  // Gram-Schmidt: the principal directions are orthogonal to each other, not to the mean.
  const out: number[][] = [];
  for (const c of candidates) {
    const v = c.slice();
    for (const d of out) removeAlong(v, d);
    const n = Math.hypot(...v);
    if (n > 1e-6) out.push(v.map((y) => y / n));
  }
  return Float32Array.from(out.flat());
}

/** `v` less its components along each of the orthonormal `directions` (rows of v.length), in place. */
export function removeCommon(v: Float64Array | number[], directions: Float32Array): void {
  const dim = v.length;
  for (let o = 0; o + dim <= directions.length; o += dim) removeAlong(v, directions.subarray(o, o + dim));
}

function removeAlong(v: Float64Array | number[], d: ArrayLike<number>): void {
  let p = 0;
  for (let c = 0; c < v.length; c++) p += v[c]! * d[c]!;
  for (let c = 0; c < v.length; c++) v[c]! -= p * d[c]!;
}
