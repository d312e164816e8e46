// Text embedding without downloaded weights, fitted on the corpus.
//
// A text becomes a sparse vector of hashed terms and adjacent-term bigrams (feature hashing: no
// vocabulary to store), weighted by sublinear tf x idf and L2-normalised; it is then projected
// onto a vector per feature: the word space of the features' co-occurrence in a seeded sample of
// documents (core/vectors/word-space.ts: PPMI, whose top singular vectors are found by randomized SVD,
// Halko, Martinsson & Tropp 2011: random range finder, power iterations, small SVD). Until
// generation model 'words-hashed', the vectors were LSA's (the right singular vectors of the
// sample's document x feature matrix; `space: 'lsa'`): short posts of one subject that share no
// word stayed orthogonal there (docs/fields.md, "Narratives"). Until model 'words-known', every
// feature counted through its bucket; now only the features the fit learnt do (`known`), and words
// folded in after the fit (core/vectors/fold-in.ts). Since model 'words-common' it keeps the
// directions every post shares (common-directions.ts), which a query's folded words leave out. The model (idf, projection, known features) is
// deterministic for a given corpus, seed and parameters, is saved with the generation, and embeds
// queries exactly as documents.
// Hand-written because it is the product's own core: a few hundred lines of typed-array loops
// that run in seconds at 1M posts, with no native or Python dependency.
import { createHash } from 'node:crypto';
import fs from 'node:fs/promises';
import { EigenvalueDecomposition, Matrix } from 'ml-matrix';
import { ANALYZER_VERSION } from '../text/analyzer.ts';
import { seededRandom } from '../stats/seeded-random.ts';
import { FURNITURE_DEFAULTS, furnitureFeatures } from './furniture-terms.ts';
import { gram, orthonormalise, rowsTimes, sparseTimesDense, transposeRows } from './svd-kernels.ts';
import { ppmiRows } from './word-space.ts';
import { commonDirections, removeCommon } from './common-directions.ts';

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
  /** Find and drop the features posts of every kind share (core/vectors/furniture-terms.ts); default on. */
  furniture?: boolean;
  /**
   * Which vectors the features get: 'words' (default), the word space of their co-occurrence
   * (core/vectors/word-space.ts); 'lsa', the right singular vectors of the post x feature matrix (the
   * embedder of earlier generations, kept for comparison).
   */
  space?: 'words' | 'lsa';
}

/**
 * The embedder a generation's manifest names; a generation of another model is refitted
 * (pipeline/features/refit-rule.ts). It names the analyzer too: a post's terms, and so its vector and its
 * postings, change with the analyzer.
 */
export const EMBEDDER_MODEL = `words-common/${ANALYZER_VERSION}`;

const DEFAULT_EMBEDDER: EmbedderParams = {
  buckets: 1 << 16,
  dim: 128,
  sample: 40_000,
  oversample: 16,
  powerIterations: 2,
  seed: 42,
};

/**
 * Parameters for a corpus of `docs` documents: the hash space grows with the corpus (8 buckets a
 * document, 2^13..2^16), since the fit's cost is linear in it and a small corpus has few distinct
 * terms to keep apart. The choice is stored in the model, so queries embed exactly as documents.
 */
export function embedderParamsFor(docs: number, base: EmbedderParams = DEFAULT_EMBEDDER): EmbedderParams {
  const want = 2 ** Math.ceil(Math.log2(Math.max(1, docs * 8)));
  return { ...base, buckets: Math.min(base.buckets, Math.max(1 << 13, want)) };
}

export interface EmbedderModel {
  params: EmbedderParams;
  version: string;
  /** idf per bucket. */
  idf: Float32Array;
  /** Row-major buckets x dim projection. */
  projection: Float32Array;
  documents: number;
  /** Features found to be furniture and given no weight (idf 0) by the fit (others near the cut lose part of it). */
  furniture?: number;
  /**
   * The features the fit learnt a vector for, as sorted feature ids (featureIdCounts): seen in at
   * least learntMinDocs of the fit's sample and the most of their bucket's occurrences there. Any other
   * feature's bucket holds what other features taught it (feature hashing), so it is left out of
   * every vector, a query's as a post's: an unknown word must not pass for another word's meaning.
   * null: a model saved before this list (every bucket taken as one feature, as it was fitted).
   */
  known: Uint32Array | null;
  /** Words given a vector after the fit, from the posts that brought them (core/vectors/fold-in.ts). */
  folded: FoldedWords;
  /**
   * The directions every post shares (core/vectors/common-directions.ts), from (up to COMMON_SAMPLE
   * of) the fit's sample posts: orthonormal rows of dim. A word folded in from its posts' mean
   * points mostly along them; a query leaves them out of its folded words (embedQuery). null: a
   * model saved before them.
   */
  common: Float32Array | null;
}

/** Words folded into a fitted model: sorted feature ids, each one's idf and vector (row-major, dim floats each). */
export interface FoldedWords {
  ids: Uint32Array;
  idf: Float32Array;
  vectors: Float32Array;
}

const NO_FOLDED_WORDS: FoldedWords = { ids: new Uint32Array(0), idf: new Float32Array(0), vectors: new Float32Array(0) };

/** A feature the fit saw in fewer of its sample's posts has no learnt vector (its PPMI row needs pairs seen twice). */
const KNOWN_MIN_DOCS = 2;

/**
 * A word in fewer of the sample's posts than learntMinDocs is not taken as learnt: the word space's
 * top singular directions describe it poorly (a rare word's row is short and mostly generic), so it
 * is folded in from its posts instead (core/vectors/fold-in.ts), in every run alike. One post in a thousand
 * of the sample, 2..20: a small corpus keeps every word it saw twice. Measured with bench new-words
 * (20,000 posts): with 2, a full run's mean precision@20 on the fixture's new-name queries was 0.656
 * against 0.756 after the incremental run that had folded the same names in; with 20, 0.812 and 0.806.
 */
export function learntMinDocs(sampleDocs: number): number {
  return Math.min(LEARNT_MIN_DOCS, Math.max(KNOWN_MIN_DOCS, Math.round(sampleDocs / 1000)));
}

const LEARNT_MIN_DOCS = 20;

/** FNV-1a over UTF-16 code units: fast, stable across runs and platforms. */
export function hashTerm(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** A document as the hashes of its analysed terms, in order (compact: 4 bytes a term). */
export function termHashes(terms: string[]): Uint32Array {
  const h = new Uint32Array(terms.length);
  for (let i = 0; i < terms.length; i++) h[i] = hashTerm(terms[i]!);
  return h;
}

/** A bigram's feature id, mixed from its terms' hashes; its bucket is the id modulo the hash space, as a term's is its hash's. */
const bigramId = (a: number, b: number): number => (Math.imul(a, 0x9e3779b1) ^ b) >>> 0;
const bigramBucket = (a: number, b: number, buckets: number): number => bigramId(a, b) % buckets;

/** A document's features by id (term hashes, bigram ids) with their counts: what a vector is made of. */
function featureIdCounts(hashes: Uint32Array): Map<number, number> {
  const m = new Map<number, number>();
  for (let i = 0; i < hashes.length; i++) {
    m.set(hashes[i]!, (m.get(hashes[i]!) ?? 0) + 1);
    if (i > 0) {
      const id = bigramId(hashes[i - 1]!, hashes[i]!);
      m.set(id, (m.get(id) ?? 0) + 1);
    }
  }
  return m;
}

/** Position of `id` in the sorted `ids`, or -1. */
export function findId(ids: Uint32Array, id: number): number {
  let lo = 0;
  let hi = ids.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (ids[mid]! < id) lo = mid + 1;
    else hi = mid;
  }
  return lo < ids.length && ids[lo] === id ? lo : -1;
}

/** Whether the fit learnt feature `id` (a model saved before the list knows every feature). */
export function isKnown(model: EmbedderModel, id: number): boolean {
  return model.known === null || findId(model.known, id) >= 0;
}

/**
 * The features the fit learnt (EmbedderModel.known): ids seen in at least learntMinDocs sample
 * posts, holding at least half of their bucket's sample occurrences (of features seen in
 * KNOWN_MIN_DOCS or more), with weight left after the furniture was taken out.
 */
function knownFeatures(sample: readonly Uint32Array[], buckets: number, idf: Float32Array): Uint32Array {
  const docs = new Map<number, number>();
  for (const d of sample) for (const id of featureIdCounts(d).keys()) docs.set(id, (docs.get(id) ?? 0) + 1);
  // Features seen once are left out of the count: their pairs are seen once too, below the word
  // space's minCount, so they teach their bucket (almost) nothing.
  const bucketDocs = new Uint32Array(buckets);
  for (const [id, n] of docs) if (n >= KNOWN_MIN_DOCS) bucketDocs[id % buckets]! += n;
  const known: number[] = [];
  const learnt = learntMinDocs(sample.length);
  for (const [id, n] of docs) if (n >= learnt && 2 * n >= bucketDocs[id % buckets]! && idf[id % buckets]! > 0) known.push(id);
  return Uint32Array.from(known).sort();
}

/** Sparse hashed features: unigrams and adjacent bigrams (mixed from the two hashes), raw counts. */
export function hashedCounts(hashes: Uint32Array, buckets: number): Map<number, number> {
  const m = new Map<number, number>();
  const add = (k: number) => m.set(k, (m.get(k) ?? 0) + 1);
  for (let i = 0; i < hashes.length; i++) {
    add(hashes[i]! % buckets);
    if (i > 0) add(bigramBucket(hashes[i - 1]!, hashes[i]!, buckets));
  }
  return m;
}

/** The same features in order, each with its term position (a bigram's is its second term's). */
function featureSequence(hashes: Uint32Array, buckets: number): { buckets: Uint32Array; positions: Uint32Array } {
  const n = Math.max(0, 2 * hashes.length - 1);
  const out = { buckets: new Uint32Array(n), positions: new Uint32Array(n) };
  let j = 0;
  for (let i = 0; i < hashes.length; i++) {
    if (i > 0) ((out.buckets[j] = bigramBucket(hashes[i - 1]!, hashes[i]!, buckets)), (out.positions[j++] = i));
    out.buckets[j] = hashes[i]! % buckets;
    out.positions[j++] = i;
  }
  return { buckets: out.buckets.subarray(0, j), positions: out.positions.subarray(0, j) };
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
  const u = seededRandom(seed);
  return () => Math.sqrt(-2 * Math.log(u() || 1e-12)) * Math.cos(2 * Math.PI * u());
}

/**
 * The fit's sample: the `sample` documents with the smallest key, a hash of the document's terms,
 * of how many identical documents came before it, and of the seed (bottom-k, consistent sampling).
 * A document's key never depends on the others, so a corpus that grows by 1% keeps ~99% of its
 * sample and a refit finds (nearly) the same space: a full rebuild then ranks as the incremental
 * runs before it did. A stride over row order would shift every pick when rows are added. Empty
 * documents carry nothing to fit and are never picked. Returned in key order.
 */
export function sampleIndices(docs: readonly Uint32Array[], sample: number, seed: number): number[] {
  const keys = new Uint32Array(docs.length);
  const seen = new Map<number, number>();
  const candidates: number[] = [];
  docs.forEach((d, i) => {
    if (d.length === 0) return;
    let h = 0x811c9dc5 ^ seed;
    for (let j = 0; j < d.length; j++) h = Math.imul(h ^ d[j]!, 0x01000193);
    const copy = seen.get(h) ?? 0;
    seen.set(h, copy + 1);
    h = Math.imul(h ^ copy, 0x01000193);
    // A final avalanche (murmur3's fmix32), so that keys of similar documents spread evenly.
    h ^= h >>> 16;
    h = Math.imul(h, 0x85ebca6b);
    h ^= h >>> 13;
    h = Math.imul(h, 0xc2b2ae35);
    h ^= h >>> 16;
    keys[i] = h >>> 0;
    candidates.push(i);
  });
  if (candidates.length <= sample) return candidates;
  const sorted = Uint32Array.from(candidates, (i) => keys[i]!).sort();
  const threshold = sorted[sample - 1]!;
  const out = candidates.filter((i) => keys[i]! < threshold);
  for (const i of candidates) {
    if (out.length >= sample) break;
    if (keys[i] === threshold) out.push(i);
  }
  return out.sort((a, b) => keys[a]! - keys[b]! || a - b);
}

/** A sparse row projected and L2-normalised into `out` (zeros when it has no weight). */
function projectUnit(r: Sparse, projection: Float32Array, dim: number, out: Float32Array): void {
  out.fill(0);
  for (let j = 0; j < r.idx.length; j++) {
    const o = r.idx[j]! * dim;
    const v = r.val[j]!;
    for (let c = 0; c < dim; c++) out[c]! += v * projection[o + c]!;
  }
  let norm = 0;
  for (let c = 0; c < dim; c++) norm += out[c]! ** 2;
  norm = Math.sqrt(norm);
  if (norm > 0) for (let c = 0; c < dim; c++) out[c]! /= norm;
}

/**
 * The projection (buckets x dim): the top right singular vectors of the sample rows, by randomized
 * SVD, each scaled by its singular value to the power `sigmaPower` (0: unscaled).
 */
function fitProjection(rows: Sparse[], params: EmbedderParams, sigmaPower = 0): Float32Array {
  const { buckets, dim, oversample, powerIterations, seed } = params;
  const l = Math.min(dim + oversample, Math.max(rows.length, 1));
  const normal = gaussian(seed);
  const omega = new Float64Array(buckets * l);
  for (let i = 0; i < omega.length; i++) omega[i] = normal();
  // Range finder with power iterations: Q spans the dominant column space of X.
  const columns = transposeRows(rows, buckets);
  let y = sparseTimesDense(rows, omega, l);
  orthonormalise(y, rows.length, l);
  for (let q = 0; q < powerIterations; q++) {
    // Orthonormalising Y each round keeps the iteration stable; the bucket-side product needs
    // no separate orthonormalisation for the few rounds used here.
    y = sparseTimesDense(rows, sparseTimesDense(columns, y, l), l);
    orthonormalise(y, rows.length, l);
  }
  // B^T = X^T Q (buckets x l); the right singular vectors of X are those of B: eigenvectors of
  // B B^T (l x l) give U_b and sigma^2, and V = B^T U_b / sigma.
  const bt = sparseTimesDense(columns, y, l);
  const g = gram(bt, buckets, l);
  const bbt = new Matrix(l, l);
  for (let i = 0; i < l; i++) for (let j = 0; j < l; j++) bbt.set(i, j, g[i * l + j]!);
  const evd = new EigenvalueDecomposition(bbt, { assumeSymmetric: true });
  const values = evd.realEigenvalues;
  const order = values
    .map((v, i) => [v, i] as const)
    .sort((a, b) => b[0] - a[0] || a[1] - b[1])
    .slice(0, dim);
  // U_b's chosen columns scaled by 1/sigma, as a dense l x dim matrix; then V = B^T U (row-major).
  const u = new Float64Array(l * dim);
  order.forEach(([sq, col], c) => {
    const sigma = Math.sqrt(Math.max(sq, 1e-12));
    const scale = sigma ** (sigmaPower - 1);
    for (let j = 0; j < l; j++) u[j * dim + c] = evd.eigenvectorMatrix.get(j, col) * scale;
  });
  const v = new Float64Array(buckets * dim);
  rowsTimes(bt, buckets, l, u, dim, v);
  const projection = Float32Array.from(v);
  // Fix each vector's sign (largest |component| positive) so refits are comparable.
  for (let c = 0; c < dim; c++) {
    let best = 0;
    let sign = 1;
    for (let k = 0; k < buckets; k++) {
      const v = projection[k * dim + c]!;
      if (Math.abs(v) > best) ((best = Math.abs(v)), (sign = Math.sign(v) || 1));
    }
    if (sign < 0) for (let k = 0; k < buckets; k++) projection[k * dim + c] = -projection[k * dim + c]!;
  }
  return projection;
}

/**
 * Fit idf on every document and the projection on a sample of them; then, unless
 * `params.furniture` is false, find the features posts of every kind share (core/vectors/furniture-terms.ts),
 * give them no weight (idf 0: they vanish from documents and queries alike) and fit the
 * projection again without them.
 * @param docs each document's term hashes (termHashes of its analysed terms)
 */
export function fitEmbedder(docs: Uint32Array[], params: EmbedderParams = DEFAULT_EMBEDDER): EmbedderModel {
  const { buckets, dim, seed } = params;
  const df = new Uint32Array(buckets);
  for (const d of docs) for (const k of hashedCounts(d, buckets).keys()) df[k]!++;
  const n = Math.max(docs.length, 1);
  const idf = new Float32Array(buckets);
  for (let k = 0; k < buckets; k++) idf[k] = Math.log((n + 1) / (df[k]! + 1)) + 1;

  const picked = sampleIndices(docs, params.sample, seed);
  const sample = picked.map((i) => hashedCounts(docs[i]!, buckets));
  const rows = sample.map((c) => weigh(c, idf));
  // The features' vectors, from the features that still carry weight.
  const fitSpace = (powerIterations: number): Float32Array => {
    if (params.space === 'lsa')
      return fitProjection(
        sample.map((c) => weigh(c, idf)),
        params,
      );
    const sequences = picked.map((i) => featureSequence(docs[i]!, buckets));
    const ppmi = ppmiRows(sequences, buckets, (b) => idf[b]! > 0).filter((r) => r.idx.length > 0);
    return fitProjection(ppmi, { ...params, powerIterations }, 0.5);
  };
  // The first fit of the word space only finds the furniture (groups of the sample's posts): one
  // power iteration is enough for that and saves a third of the fit.
  let projection = fitSpace(params.furniture === false ? params.powerIterations : 1);
  let furniture = 0;
  if (params.furniture !== false) {
    // Only the first FURNITURE_DEFAULTS.sample of the fit's sample are clustered: only those are embedded.
    const m = Math.min(rows.length, FURNITURE_DEFAULTS.sample);
    const vectors = new Float32Array(m * dim);
    for (let i = 0; i < m; i++) projectUnit(rows[i]!, projection, dim, vectors.subarray(i * dim, (i + 1) * dim));
    const found = furnitureFeatures(
      sample.slice(0, m).map((c) => Uint32Array.from(c.keys())),
      vectors,
      dim,
      { ...FURNITURE_DEFAULTS, seed },
    );
    if (found.length > 0) {
      for (const [k, w] of found) idf[k]! *= 1 - w;
      furniture = found.filter(([, w]) => w === 1).length;
      projection = fitSpace(params.powerIterations);
    }
  }
  const version = createHash('sha256')
    .update(JSON.stringify(params))
    .update(ANALYZER_VERSION)
    .update(Buffer.from(idf.buffer))
    .update(Buffer.from(projection.buffer))
    .digest('hex')
    .slice(0, 16);
  const known = knownFeatures(
    picked.map((i) => docs[i]!),
    buckets,
    idf,
  );
  const model: EmbedderModel = {
    params,
    version: `${params.space === 'lsa' ? 'lsa' : 'words'}-${version}`,
    idf,
    projection,
    documents: docs.length,
    furniture,
    known,
    folded: NO_FOLDED_WORDS,
    common: null,
  };
  return {
    ...model,
    common: postsCommon(
      model,
      picked.slice(0, COMMON_SAMPLE).map((i) => docs[i]!),
    ),
  };
}

/** Posts the common directions are found from: plenty for a 128 x 128 covariance. */
const COMMON_SAMPLE = 5_000;

/** The common directions (core/vectors/common-directions.ts) of `docs` under `model`. */
function postsCommon(model: EmbedderModel, docs: readonly Uint32Array[]): Float32Array {
  const { dim } = model.params;
  const vectors = new Float32Array(docs.length * dim);
  docs.forEach((d, i) => embedHashes(model, d, vectors.subarray(i * dim, (i + 1) * dim)));
  return commonDirections(vectors, dim);
}

/**
 * Embed a document's term hashes: the sum of its known and folded features' vectors, each weighted
 * by sublinear tf x idf, L2-normalised. No such feature embeds to zeros. `query`: a search's terms,
 * whose folded words, when they are all it knows, leave out the model's common directions (embedQuery).
 */
export function embedHashes(
  model: EmbedderModel,
  hashes: Uint32Array,
  out: Float32Array = new Float32Array(model.params.dim),
  opts: { query?: boolean } = {},
): Float32Array {
  const { buckets, dim } = model.params;
  const { folded } = model;
  out.fill(0);
  const apart = opts.query && model.common ? new Float64Array(dim) : null;
  let learnt = false;
  for (const [id, count] of featureIdCounts(hashes)) {
    let row: Float32Array;
    let o: number;
    let w = 1 + Math.log(count);
    let to: Float32Array | Float64Array = out;
    if (isKnown(model, id)) ((row = model.projection), (o = (id % buckets) * dim), (w *= model.idf[id % buckets]!));
    else {
      const j = folded.ids.length > 0 ? findId(folded.ids, id) : -1;
      if (j < 0) continue;
      ((row = folded.vectors), (o = j * dim), (w *= folded.idf[j]!), (to = apart ?? out));
    }
    if (w === 0) continue;
    if (to === out) learnt = true;
    for (let c = 0; c < dim; c++) to[c]! += w * row[o + c]!;
  }
  if (apart) {
    if (!learnt) removeCommon(apart, model.common!);
    for (let c = 0; c < dim; c++) out[c]! += apart[c]!;
  }
  let norm = 0;
  for (let c = 0; c < dim; c++) norm += out[c]! ** 2;
  norm = Math.sqrt(norm);
  if (norm > 0) for (let c = 0; c < dim; c++) out[c]! /= norm;
  return out;
}

/** Whether a term has a vector in the model: learnt by the fit, or folded in since. */
export function embedderKnows(model: EmbedderModel, term: string): boolean {
  const h = hashTerm(term);
  return isKnown(model, h) || findId(model.folded.ids, h) >= 0;
}

/** Embed analysed terms as a document's are. */
export function embed(model: EmbedderModel, terms: string[], out?: Float32Array): Float32Array {
  return embedHashes(model, termHashes(terms), out);
}

/**
 * Embed a search's analysed terms: as a document's, but a query of folded words only (core/vectors/fold-in.ts)
 * leaves out the directions every post shares (model.common; common-directions.ts). A folded word is
 * the mean of its posts, and on real tweets that mean points along them: a query of a new name was
 * 0.95 similar to "I love you today", and 100 of 100 rows billed were unrelated. Without them the query
 * keeps what the name's posts share beyond what all posts share; its own posts, which hold the whole
 * folded vector, stay near it. Beside learnt words a folded word keeps its whole vector: there the
 * learnt words place the query, and a name reduced to its uncommon part lost it to them ("IslaLink
 * refunds for cancelled crossings": precision@20 0.55 -> 0.05 on the fixture). Posts keep the plain
 * mean: it holds a story's posts together in the narratives (taken out of the posts too, a planted
 * story of 30 split 22 + 8 on the sample).
 */
export function embedQuery(model: EmbedderModel, terms: string[]): Float32Array {
  return embedHashes(model, termHashes(terms), undefined, { query: true });
}

// ---- persistence: a small JSON header, then the arrays as raw little-endian 32-bit words -------
// idf (buckets), projection (buckets x dim), known ids, folded ids, folded idf, folded vectors, common
// directions. A file of an earlier model has neither list: every bucket is then its own feature
// (known: null); one saved before the common directions has none.

export async function saveEmbedder(model: EmbedderModel, file: string): Promise<void> {
  const { known, folded } = model;
  const header = Buffer.from(
    JSON.stringify({
      params: model.params,
      version: model.version,
      documents: model.documents,
      furniture: model.furniture,
      known: known?.length ?? null,
      folded: folded.ids.length,
      common: model.common?.length ?? 0,
    }),
    'utf8',
  );
  const len = Buffer.alloc(4);
  len.writeUInt32LE(header.length);
  const parts = [
    model.idf,
    model.projection,
    ...(known ? [known] : []),
    folded.ids,
    folded.idf,
    folded.vectors,
    ...(model.common ? [model.common] : []),
  ];
  await fs.writeFile(file, Buffer.concat([len, header, ...parts.map((a) => Buffer.from(a.buffer, a.byteOffset, a.byteLength))]));
}

/**
 * Read a saved model. With `share`, its arrays live in one SharedArrayBuffer, so the server's
 * threads (search workers, job retrieval threads) use the main thread's copy instead of their own.
 */
export async function loadEmbedder(file: string, opts: { share?: boolean } = {}): Promise<EmbedderModel> {
  const buf = await fs.readFile(file);
  const hl = buf.readUInt32LE(0);
  const header = JSON.parse(buf.subarray(4, 4 + hl).toString('utf8')) as Pick<
    EmbedderModel,
    'params' | 'version' | 'documents' | 'furniture'
  > & {
    known?: number | null;
    folded?: number;
    common?: number;
  };
  const { buckets, dim } = header.params;
  const known = header.known ?? null;
  const folded = header.folded ?? 0;
  const common = header.common ?? null;
  const words = buckets + buckets * dim + (known ?? 0) + folded * (2 + dim) + (common ?? 0);
  const bytes = buf.length - 4 - hl;
  if (bytes !== 4 * words) throw new Error(`embedder file ${file} has ${bytes / 4} words, expected ${words}`);
  // One copy, into aligned memory (the header's length makes the arrays' offset in the file arbitrary).
  const memory = opts.share ? new SharedArrayBuffer(bytes) : new ArrayBuffer(bytes);
  new Uint8Array(memory).set(buf.subarray(4 + hl));
  let at = 0;
  const take = <T extends Float32Array | Uint32Array>(Kind: new (b: ArrayBufferLike, o: number, n: number) => T, n: number): T => {
    const a = new Kind(memory, at * 4, n);
    at += n;
    return a;
  };
  const idf = take(Float32Array, buckets);
  const projection = take(Float32Array, buckets * dim);
  const knownIds = known === null ? null : take(Uint32Array, known);
  const ids = take(Uint32Array, folded);
  const foldedWords = { ids, idf: take(Float32Array, folded), vectors: take(Float32Array, folded * dim) };
  return {
    params: header.params,
    version: header.version,
    documents: header.documents,
    furniture: header.furniture,
    idf,
    projection,
    known: knownIds,
    folded: foldedWords,
    common: common === null ? null : take(Float32Array, common),
  };
}
