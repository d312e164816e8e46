// The vector floor of one query: how similar a row must be to count as a semantic match. A fixed
// cosine (RANKING.vectorFloor) is a fine floor where posts spread over the space, but real tweets
// crowd into a narrow cone (the mean of 20,000 tweets' unit vectors is 0.63 long), and there a
// query whose vector leans into the crowd was 0.35 similar to thousands of unrelated tweets, each
// billed. So the floor is also the similarity a row reaches by chance for THIS query: the median
// of the query's cosine over an even sample of the rows plus CHANCE_Z robust standard deviations
// (1.4826 x the median absolute deviation). Median and MAD, not mean and variance: the query's own
// story may be a tenth of a small corpus, and must not raise the bar it is measured against.
// Where rows spread, the floor stays 0.35 (docs/fields.md, "Ranking").
import type { QuantizedVectors } from '../vectors/quantized-vectors.ts';
import { F32Rows } from '../vectors/f32-dots.ts';

/** Robust standard deviations above the median similarity: a one-sided normal tail of 0.13%. */
const CHANCE_Z = 3;

/** Rows the chance similarity is measured on (evenly spaced): 256k multiply-adds a query, by SIMD (f32-dots.ts). */
const SAMPLE_ROWS = 2_000;

/** MAD x this estimates a normal's standard deviation. */
const MAD_TO_SD = 1.4826;

const samples = new WeakMap<QuantizedVectors, F32Rows>();

/** Up to SAMPLE_ROWS rows' vectors (rows without one skipped), decoded once per vectors object. */
function sampleOf(vectors: QuantizedVectors): F32Rows {
  let s = samples.get(vectors);
  if (s) return s;
  const dim = vectors.dim;
  const n = Math.min(vectors.rows, SAMPLE_ROWS);
  const rows: number[] = [];
  for (let i = 0; i < n; i++) {
    const row = Math.floor((i * vectors.rows) / n);
    if (vectors.hasVector(row)) rows.push(row);
  }
  const v = new Float64Array(dim);
  const decoded = new Float32Array(rows.length * dim);
  rows.forEach((row, i) => {
    vectors.decodeInto(row, v, 0);
    decoded.set(v, i * dim);
  });
  samples.set(vectors, (s = new F32Rows(decoded, dim)));
  return s;
}

function median(xs: Float64Array): number {
  const sorted = xs.slice().sort();
  const n = sorted.length;
  return n % 2 ? sorted[n >> 1]! : (sorted[n / 2 - 1]! + sorted[n / 2]!) / 2;
}

/** The similarity rows reach by chance for query vector `q` (unit length): median + CHANCE_Z robust sd; 0 when no row has a vector. */
export function chanceSimilarity(vectors: QuantizedVectors, q: ArrayLike<number>): number {
  const sample = sampleOf(vectors);
  const n = sample.n;
  if (n === 0) return 0;
  const sims = new Float64Array(n);
  sample.dotsInto(q, sims);
  const m = median(sims);
  for (let i = 0; i < n; i++) sims[i] = Math.abs(sims[i]! - m);
  return m + CHANCE_Z * MAD_TO_SD * median(sims);
}
