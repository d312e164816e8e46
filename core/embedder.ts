// Text embedding without downloaded weights: latent semantic analysis fitted on the corpus.
//
// A text becomes a sparse vector of hashed terms and adjacent-term bigrams (feature hashing: no
// vocabulary to store), weighted by sublinear tf x idf and L2-normalised; it is then projected
// onto the top-k right singular vectors of the corpus's term matrix, found by randomized SVD
// (Halko, Martinsson & Tropp 2011: random range finder, power iterations, small SVD) fitted on a
// seeded sample of documents. The model (idf, projection) is deterministic for a given corpus,
// seed and parameters, is saved with the generation, and embeds queries exactly as documents.
// Hand-written because it is the product's own core: a few hundred lines of typed-array loops
// that run in seconds at 1M posts, with no native or Python dependency.
import { createHash } from 'node:crypto';
import fs from 'node:fs/promises';
import { EigenvalueDecomposition, Matrix } from 'ml-matrix';
import { ANALYZER_VERSION } from './analyzer.ts';

export interface EmbedderParams {
  /** Hash space of terms and bigrams. */
  buckets: number;
  /** Output dimension. */
  dim: number;
  /** Documents sampled to fit the projection. */
  sample: number;
  oversample: number;
  powerIterations: number;
  seed: number;
}

export const DEFAULT_EMBEDDER: EmbedderParams = { buckets: 1 << 16, dim: 128, sample: 40_000, oversample: 16, powerIterations: 2, seed: 42 };

export interface EmbedderModel {
  params: EmbedderParams;
  version: string;
  /** idf per bucket. */
  idf: Float32Array;
  /** Row-major buckets x dim projection. */
  projection: Float32Array;
  documents: number;
}

/** FNV-1a over UTF-16 code units: fast, stable across runs and platforms. */
function hashTerm(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** Sparse hashed features of analysed terms: unigrams and adjacent bigrams, raw counts. */
export function hashedCounts(terms: string[], buckets: number): Map<number, number> {
  const m = new Map<number, number>();
  const add = (k: number) => m.set(k, (m.get(k) ?? 0) + 1);
  for (let i = 0; i < terms.length; i++) {
    add(hashTerm(terms[i]!) % buckets);
    if (i > 0) add(hashTerm(`${terms[i - 1]} ${terms[i]}`) % buckets);
  }
  return m;
}

interface Sparse {
  idx: Uint32Array;
  val: Float32Array;
}

function weigh(counts: Map<number, number>, idf: Float32Array): Sparse {
  const idx = new Uint32Array(counts.size);
  const val = new Float32Array(counts.size);
  let i = 0;
  let norm = 0;
  for (const [k, c] of counts) {
    const w = (1 + Math.log(c)) * idf[k]!;
    idx[i] = k;
    val[i] = w;
    norm += w * w;
    i++;
  }
  norm = Math.sqrt(norm) || 1;
  for (let j = 0; j < val.length; j++) val[j]! /= norm;
  return { idx, val };
}

/** Deterministic standard normals (mulberry32 + Box-Muller). */
function gaussian(seed: number): () => number {
  let a = seed >>> 0;
  const u = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return () => Math.sqrt(-2 * Math.log(u() || 1e-12)) * Math.cos(2 * Math.PI * u());
}

/** Y (rows x l) = X (sparse rows) * B (buckets x l). */
function sparseTimesDense(rows: Sparse[], b: Float64Array, l: number): Float64Array {
  const y = new Float64Array(rows.length * l);
  rows.forEach((r, i) => {
    const o = i * l;
    for (let j = 0; j < r.idx.length; j++) {
      const bo = r.idx[j]! * l;
      const v = r.val[j]!;
      for (let c = 0; c < l; c++) y[o + c]! += v * b[bo + c]!;
    }
  });
  return y;
}

/** Z (buckets x l) = X^T (sparse rows)^T * Y (rows x l). */
function sparseTransposeTimesDense(rows: Sparse[], y: Float64Array, l: number, buckets: number): Float64Array {
  const z = new Float64Array(buckets * l);
  rows.forEach((r, i) => {
    const o = i * l;
    for (let j = 0; j < r.idx.length; j++) {
      const zo = r.idx[j]! * l;
      const v = r.val[j]!;
      for (let c = 0; c < l; c++) z[zo + c]! += v * y[o + c]!;
    }
  });
  return z;
}

/** Orthonormalise the l columns of a (n x l, row-major) in place: modified Gram-Schmidt. */
function orthonormalise(a: Float64Array, n: number, l: number): void {
  for (let c = 0; c < l; c++) {
    for (let p = 0; p < c; p++) {
      let dot = 0;
      for (let r = 0; r < n; r++) dot += a[r * l + c]! * a[r * l + p]!;
      for (let r = 0; r < n; r++) a[r * l + c]! -= dot * a[r * l + p]!;
    }
    let norm = 0;
    for (let r = 0; r < n; r++) norm += a[r * l + c]! ** 2;
    norm = Math.sqrt(norm) || 1;
    for (let r = 0; r < n; r++) a[r * l + c]! /= norm;
  }
}

/** Deterministic sample of document indices (every step-th, offset by the seed). */
function sampleIndices(n: number, sample: number, seed: number): number[] {
  if (n <= sample) return Array.from({ length: n }, (_, i) => i);
  const step = n / sample;
  const off = (seed % 997) / 997;
  return Array.from({ length: sample }, (_, i) => Math.min(n - 1, Math.floor((i + off) * step)));
}

/**
 * Fit idf on every document and the projection on a sample of them.
 * @param docs analysed terms of each document
 */
export function fitEmbedder(docs: string[][], params: EmbedderParams = DEFAULT_EMBEDDER): EmbedderModel {
  const { buckets, dim, oversample, powerIterations, seed } = params;
  const df = new Uint32Array(buckets);
  for (const d of docs) for (const k of hashedCounts(d, buckets).keys()) df[k]!++;
  const n = Math.max(docs.length, 1);
  const idf = new Float32Array(buckets);
  for (let k = 0; k < buckets; k++) idf[k] = Math.log((n + 1) / (df[k]! + 1)) + 1;

  const rows = sampleIndices(docs.length, params.sample, seed).map((i) => weigh(hashedCounts(docs[i]!, buckets), idf));
  const l = Math.min(dim + oversample, Math.max(rows.length, 1));
  const g = gaussian(seed);
  const omega = new Float64Array(buckets * l);
  for (let i = 0; i < omega.length; i++) omega[i] = g();
  // Range finder with power iterations: Q spans the dominant column space of X.
  let y = sparseTimesDense(rows, omega, l);
  orthonormalise(y, rows.length, l);
  for (let q = 0; q < powerIterations; q++) {
    const z = sparseTransposeTimesDense(rows, y, l, buckets);
    orthonormalise(z, buckets, l);
    y = sparseTimesDense(rows, z, l);
    orthonormalise(y, rows.length, l);
  }
  // B^T = X^T Q (buckets x l); the right singular vectors of X are those of B: eigenvectors of
  // B B^T (l x l) give U_b and sigma^2, and V = B^T U_b / sigma.
  const bt = sparseTransposeTimesDense(rows, y, l, buckets);
  const bbt = new Matrix(l, l);
  for (let i = 0; i < l; i++) {
    for (let j = i; j < l; j++) {
      let s = 0;
      for (let k = 0; k < buckets; k++) s += bt[k * l + i]! * bt[k * l + j]!;
      bbt.set(i, j, s);
      bbt.set(j, i, s);
    }
  }
  const evd = new EigenvalueDecomposition(bbt, { assumeSymmetric: true });
  const values = evd.realEigenvalues;
  const vectors = evd.eigenvectorMatrix;
  const order = values.map((v, i) => [v, i] as const).sort((a, b) => b[0] - a[0] || a[1] - b[1]).slice(0, dim);
  const projection = new Float32Array(buckets * dim);
  order.forEach(([sq, col], c) => {
    const sigma = Math.sqrt(Math.max(sq, 1e-12));
    // Fix each vector's sign (largest |component| positive) so refits are comparable.
    let best = 0;
    let sign = 1;
    for (let k = 0; k < buckets; k++) {
      let v = 0;
      for (let j = 0; j < l; j++) v += bt[k * l + j]! * vectors.get(j, col);
      v /= sigma;
      projection[k * dim + c] = v;
      if (Math.abs(v) > best) (best = Math.abs(v)), (sign = Math.sign(v) || 1);
    }
    if (sign < 0) for (let k = 0; k < buckets; k++) projection[k * dim + c] = -projection[k * dim + c]!;
  });
  const version = createHash('sha256').update(JSON.stringify(params)).update(ANALYZER_VERSION)
    .update(Buffer.from(idf.buffer)).update(Buffer.from(projection.buffer)).digest('hex').slice(0, 16);
  return { params, version: `lsa-${version}`, idf, projection, documents: docs.length };
}

/** Embed analysed terms: tf-idf, project, L2-normalise. A text with no known terms embeds to zeros. */
export function embed(model: EmbedderModel, terms: string[], out = new Float32Array(model.params.dim)): Float32Array {
  const { buckets, dim } = model.params;
  out.fill(0);
  const sp = weigh(hashedCounts(terms, buckets), model.idf);
  for (let j = 0; j < sp.idx.length; j++) {
    const o = sp.idx[j]! * dim;
    const v = sp.val[j]!;
    for (let c = 0; c < dim; c++) out[c]! += v * model.projection[o + c]!;
  }
  let norm = 0;
  for (let c = 0; c < dim; c++) norm += out[c]! ** 2;
  norm = Math.sqrt(norm);
  if (norm > 0) for (let c = 0; c < dim; c++) out[c]! /= norm;
  return out;
}

// ---- persistence: a small JSON header and the two arrays as raw little-endian float32 ------

export async function saveEmbedder(model: EmbedderModel, file: string): Promise<void> {
  const header = Buffer.from(JSON.stringify({ params: model.params, version: model.version, documents: model.documents }), 'utf8');
  const len = Buffer.alloc(4);
  len.writeUInt32LE(header.length);
  await fs.writeFile(file, Buffer.concat([len, header, Buffer.from(model.idf.buffer), Buffer.from(model.projection.buffer)]));
}

export async function loadEmbedder(file: string): Promise<EmbedderModel> {
  const buf = await fs.readFile(file);
  const hl = buf.readUInt32LE(0);
  const header = JSON.parse(buf.subarray(4, 4 + hl).toString('utf8')) as Pick<EmbedderModel, 'params' | 'version' | 'documents'>;
  const { buckets, dim } = header.params;
  const body = new Uint8Array(buf.length - 4 - hl);
  body.set(buf.subarray(4 + hl));
  const floats = new Float32Array(body.buffer);
  if (floats.length !== buckets + buckets * dim) throw new Error(`embedder file ${file} has ${floats.length} floats, expected ${buckets + buckets * dim}`);
  return { ...header, idf: floats.slice(0, buckets), projection: floats.slice(buckets) };
}
