// The maps' clustering: a window's posts on their unit vectors (cosine geometry), text vectors for
// narratives, visual vectors for patterns (each with its own options):
//   1. a deterministic, evenly spaced sample of the window's rows (SAMPLE rows at most);
//   2. k-means (core/stats/lloyd-kmeans.ts, seeded by k-means++: core/stats/kmeans-plus-plus.ts) on part of
//      the sample for each k of a geometric grid;
//      the mean silhouette (cosine distance, on a sub-sample) of each clustering is measured, less
//      kPenalty x ln k, and the smallest k within silhouetteTolerance of the best score wins: the
//      silhouette rewards clusters that are both tight and apart, so it finds the number of stories
//      rather than the number that minimises inertia (which always falls with k); the penalty and
//      the tolerance prefer the coarser of near-equal clusterings (without the penalty, posts with
//      no strong grouping ran to kMax); k-means then runs once more at that k on the whole sample;
//   2b. bisecting refinement: a cluster is split in two while that raises the score (k-means
//      at a fixed k can leave one centre over two groups);
//   3. the winning centroids, made unit length, take every row of the window: its narrative is the
//      nearest centroid by cosine;
//   4. noise: a row less similar than noiseSimilarity to its centroid belongs to none, and a
//      cluster left with fewer than minClusterSize rows is dissolved into noise: a handful of
//      posts is not a narrative.
// Sampling keeps the cost of the k search fixed however large the window; only step 3 grows with it.
import { dot } from '../vectors/dot.ts';
import { assert, AssertionFailed, assertInt } from '../infra/assert.ts';
import { lloydKMeans } from '../stats/lloyd-kmeans.ts';
import { seedCentres } from '../stats/kmeans-plus-plus.ts';

export interface ClusterOptions {
  seed: number;
  /** Rows the final k-means sees. */
  sample: number;
  /** Rows the k search sees (a part of the sample). */
  searchSample: number;
  /** The smallest k whose score is within this of the best wins (parsimony). */
  silhouetteTolerance: number;
  /**
   * A clustering's score is its silhouette less kPenalty x ln k (0: the silhouette alone). On
   * posts with no strong grouping (real tweets) the silhouette keeps rising with k, a little for
   * each finer cut, so the search ran to kMax; the penalty asks every multiplication of k to buy
   * its price in silhouette, which stories that stand apart pay easily.
   */
  kPenalty?: number;
  /** Rows the silhouette is computed on (quadratic cost). */
  silhouetteSample: number;
  kMin: number;
  kMax: number;
  /** Ratio between successive k values of the grid. */
  kStep: number;
  maxIterations: number;
  /** Seedings of the final k-means (a cold start); the one with the lowest inertia is kept. */
  restarts?: number;
  /** Bisect clusters while a split raises the silhouette by at least splitGain (see splitWhileSilhouetteRises). */
  splitRefine: boolean;
  splitGain: number;
  noiseSimilarity: number;
  /** Smallest cluster kept: max(minClusterSize, minClusterShare x rows). */
  minClusterSize: number;
  minClusterShare: number;
}

export const CLUSTER_DEFAULTS: ClusterOptions = {
  seed: 42,
  sample: 4000,
  searchSample: 2000,
  silhouetteTolerance: 0.01,
  silhouetteSample: 1000,
  kMin: 4,
  kMax: 96,
  kStep: 1.25,
  maxIterations: 20,
  // Off: 0.08 kept the 2,914 TweetEval stance tweets (five subjects; silhouette 0.05 at k = 4
  // rising to 0.19 at 76) at 4 narratives, but cut the 68,771 TweetEval corpus tweets into 4
  // narratives a window of up to 25,000 posts ("day, time, tonight"), against 92 readable ones
  // without it; between 0.05 and 0.06 the stance tweets jump from 61 narratives to 4 (no middle):
  // one global price for k does not fit both (issue 19; bench/RESULTS.md).
  kPenalty: 0,
  // In the word space (core/vectors/word-space.ts) a broad subject's posts sit at cosine 0.2-0.3 to its
  // centre: 0.3 left a third of the stance tweets as noise.
  noiseSimilarity: 0.2,
  minClusterSize: 5,
  minClusterShare: 0.002,
  splitRefine: true,
  splitGain: 0.005,
};

/** Fresh centres the warm start may add to the previous ones. */
const WARM_EXTRA = 3;

export interface Clustering {
  k: number;
  /** k x dim, unit length (clusters dissolved into noise included; see `kept`). */
  centroids: Float32Array;
  /** Whether cluster c survived the size rule. */
  kept: boolean[];
  /** Per input row: its cluster, or -1 (noise). */
  assignment: Int32Array;
  /** Per input row: cosine to its nearest centroid. */
  similarity: Float32Array;
  /** Mean silhouette of the chosen k, and of every k tried. */
  silhouette: number;
  tried: Array<{ k: number; silhouette: number }>;
  /** Whether the previous generation's centres were kept as the start (see `prior`). */
  warmStart: boolean;
}

/** A clustering of `n` rows with no cluster: every row noise. */
export function noClusters(n: number): Clustering {
  return {
    k: 0,
    centroids: new Float32Array(0),
    kept: [],
    assignment: new Int32Array(n).fill(-1),
    similarity: new Float32Array(n),
    silhouette: 0,
    tried: [],
    warmStart: false,
  };
}

/** Geometric grid of k values between kMin and kMax, each `step` times the last (at least +1). */
export function kGrid(kMin: number, kMax: number, step = 1.12): number[] {
  const out: number[] = [];
  for (let k = kMin; k <= kMax; k = Math.max(k + 1, Math.round(k * step))) out.push(k);
  return out;
}

/** Evenly spaced, deterministic indices 0..n-1 (n or fewer). */
export function spread(n: number, m: number): number[] {
  if (n <= m) return Array.from({ length: n }, (_, i) => i);
  return Array.from({ length: m }, (_, i) => Math.floor(((i + 0.5) * n) / m));
}

/** Cosine distances between the points `idx` (indices into `points`), row-major |idx| x |idx|. */
export function distanceMatrix(points: Float32Array, dim: number, idx: number[]): Float32Array {
  const n = idx.length;
  const d = new Float32Array(n * n);
  for (let a = 0; a < n; a++) {
    for (let b = a + 1; b < n; b++) {
      const x = 1 - dot(points, idx[a]! * dim, points, idx[b]! * dim, dim);
      d[a * n + b] = x;
      d[b * n + a] = x;
    }
  }
  return d;
}

/**
 * Mean silhouette (Rousseeuw 1987) of the points of a distance matrix under `labels` (one per
 * point, 0..k-1): s = (b - a) / max(a, b), a = mean distance to its own cluster, b = to the nearest
 * other cluster; 0 for a point alone in its cluster.
 */
export function silhouette(dist: Float32Array, labels: ArrayLike<number>, k: number): number {
  const n = labels.length;
  let total = 0;
  const sums = new Float64Array(k);
  const counts = new Uint32Array(k);
  for (let j = 0; j < n; j++) counts[labels[j]!]!++;
  for (let i = 0; i < n; i++) {
    sums.fill(0);
    const o = i * n;
    for (let j = 0; j < n; j++) sums[labels[j]!]! += dist[o + j]!;
    const own = labels[i]!;
    const ownCount = counts[own]! - 1;
    if (ownCount === 0) continue;
    const a = sums[own]! / ownCount;
    let b = Infinity;
    for (let c = 0; c < k; c++) if (c !== own && counts[c]! > 0) b = Math.min(b, sums[c]! / counts[c]!);
    if (b === Infinity) continue;
    total += (b - a) / Math.max(a, b, 1e-12);
  }
  return n ? total / n : 0;
}

const rowArrays = new WeakMap<readonly number[], Float64Array>();

/** One k-means run from the given centres (core/stats/lloyd-kmeans.ts: ml-kmeans's result, faster); its input made once per row list. */
export function runKMeans(
  points: Float32Array,
  dim: number,
  idx: readonly number[],
  init: number[][],
  maxIterations: number,
): { clusters: number[]; centroids: number[][] } {
  let data = rowArrays.get(idx);
  if (!data) {
    data = new Float64Array(idx.length * dim);
    idx.forEach((i, r) => data!.set(points.subarray(i * dim, (i + 1) * dim), r * dim));
    rowArrays.set(idx, data);
  }
  const res = lloydKMeans(data, dim, Float64Array.from(init.flat()), maxIterations, 1e-4);
  return { clusters: Array.from(res.clusters), centroids: init.map((_, c) => Array.from(res.centroids.subarray(c * dim, (c + 1) * dim))) };
}

export function normaliseRows(m: number[][], dim: number): Float32Array {
  const out = new Float32Array(m.length * dim);
  m.forEach((row, c) => {
    let n = 0;
    for (let i = 0; i < dim; i++) n += row[i]! * row[i]!;
    n = Math.sqrt(n) || 1;
    for (let i = 0; i < dim; i++) out[c * dim + i] = row[i]! / n;
  });
  return out;
}

/** The window's sample and the part the k search sees, with the silhouette sample's distances. */
interface SearchSample {
  dim: number;
  opts: ClusterOptions;
  sampleIdx: number[];
  samplePoints: Float32Array;
  searchIdx: number[];
  /** Positions in searchIdx of the silhouette sample, whose cosine distances `dist` holds. */
  silPos: number[];
  dist: Float32Array;
}

type Tried = { k: number; silhouette: number };

/**
 * The evenly spaced sample of `rows`; the k search runs on a part of it, and the silhouette
 * sample's distances are computed once, so each k then costs one k-means and additions.
 */
function searchSample(vectors: Float32Array, dim: number, rows: Int32Array | number[], opts: ClusterOptions): SearchSample {
  const sampleIdx = spread(rows.length, opts.sample);
  const samplePoints = new Float32Array(sampleIdx.length * dim);
  sampleIdx.forEach((s, i) => samplePoints.set(vectors.subarray(rows[s]! * dim, (rows[s]! + 1) * dim), i * dim));
  const searchIdx = spread(sampleIdx.length, opts.searchSample);
  const silPos = spread(searchIdx.length, opts.silhouetteSample);
  const dist = distanceMatrix(
    samplePoints,
    dim,
    silPos.map((p) => searchIdx[p]!),
  );
  return { dim, opts, sampleIdx, samplePoints, searchIdx, silPos, dist };
}

/** k-means on the search part from k-means++ centres (after `initial`), and its silhouette. */
function trySearchK(s: SearchSample, k: number, initial: readonly Float32Array[] = []): Tried {
  const { samplePoints, dim, searchIdx, silPos, dist, opts } = s;
  const res = runKMeans(
    samplePoints,
    dim,
    searchIdx,
    seedCentres(samplePoints, dim, searchIdx, k, opts.seed + k, initial),
    opts.maxIterations,
  );
  return {
    k,
    silhouette: silhouette(
      dist,
      silPos.map((p) => res.clusters[p]!),
      k,
    ),
  };
}

/**
 * Stability: the previous generation's clusters, started from their own centres, are one more
 * candidate, and win whenever their silhouette is within the tolerance of the best: a story that
 * continues then keeps its members (and its key) instead of being cut anew by a fresh seeding.
 * The previous run kept only its surviving clusters, so the warm candidates add up to WARM_EXTRA
 * fresh centres (seeded from the previous ones on) for what it dissolved or what is new.
 */
function warmCandidate(
  s: SearchSample,
  prior: readonly Float32Array[] | undefined,
  kCap: number,
  score: (t: Tried) => number,
): Tried | null {
  let warm: Tried | null = null;
  if (prior && prior.length >= 1) {
    for (let extra = 0; extra <= WARM_EXTRA; extra++) {
      const k = prior.length + extra;
      if (k < 2 || k > kCap) continue;
      const cand = trySearchK(s, k, prior);
      if (!warm || score(cand) > score(warm) + s.opts.silhouetteTolerance) warm = cand;
    }
  }
  return warm;
}

/**
 * k-means at the chosen k on the whole sample. It finds a local optimum: a cold start tries
 * several seedings and keeps the tightest (two similar groups merged under one centre while
 * another group is split costs inertia); a warm start runs once from the prior centres.
 */
function finalKMeans(
  s: SearchSample,
  k: number,
  prior: readonly Float32Array[] | undefined,
): { clusters: number[]; centroids: number[][] } {
  const { samplePoints, dim, sampleIdx, searchIdx, opts } = s;
  const all = searchIdx.length === sampleIdx.length ? searchIdx : sampleIdx.map((_, i) => i);
  const runs = prior ? 1 : Math.max(1, opts.restarts ?? 1);
  let final: { clusters: number[]; centroids: number[][] } | null = null;
  let finalInertia = Infinity;
  for (let r = 0; r < runs; r++) {
    const res = runKMeans(
      samplePoints,
      dim,
      all,
      seedCentres(samplePoints, dim, all, k, opts.seed + 7919 * r, prior ?? []),
      2 * opts.maxIterations,
    );
    let inertia = 0;
    res.clusters.forEach((c, i) => {
      const centre = res.centroids[c]!;
      for (let j = 0; j < dim; j++) inertia += (samplePoints[i * dim + j]! - centre[j]!) ** 2;
    });
    if (inertia < finalInertia) ((final = res), (finalInertia = inertia));
  }
  return final!;
}

/** Every row to its nearest centroid by cosine; noise below noiseSimilarity, and clusters under minSize dissolved. */
function assignRows(
  vectors: Float32Array,
  dim: number,
  rows: Int32Array | number[],
  centroids: Float32Array,
  k: number,
  minSize: number,
  opts: ClusterOptions,
): Pick<Clustering, 'kept' | 'assignment' | 'similarity'> {
  const n = rows.length;
  const assignment = new Int32Array(n);
  const similarity = new Float32Array(n);
  const sizes = new Uint32Array(k);
  for (let i = 0; i < n; i++) {
    const o = rows[i]! * dim;
    let bc = 0;
    let bs = -Infinity;
    for (let c = 0; c < k; c++) {
      const s = dot(vectors, o, centroids, c * dim, dim);
      if (s > bs) ((bs = s), (bc = c));
    }
    similarity[i] = bs;
    assignment[i] = bs >= opts.noiseSimilarity ? bc : -1;
    if (assignment[i]! >= 0) sizes[bc]!++;
  }
  const kept = Array.from(sizes, (s) => s >= minSize);
  for (let i = 0; i < n; i++) if (assignment[i]! >= 0 && !kept[assignment[i]!]) assignment[i] = -1;
  return { kept, assignment, similarity };
}

/**
 * Cluster `rows` (indices into `vectors`, each a unit vector of `dim`); see the header.
 * Rows must have non-zero vectors. `prior`: the previous generation's centres of this window, in
 * this run's space (the unit mean of their members' current vectors: pipeline/maps/previous-map.ts),
 * offered as a warm start.
 */
export function clusterWindow(
  vectors: Float32Array,
  dim: number,
  rows: Int32Array | number[],
  opts: ClusterOptions = CLUSTER_DEFAULTS,
  prior?: readonly Float32Array[],
): Clustering {
  const n = rows.length;
  assertInt(dim, 1, 1 << 16, 'dim');
  assert(vectors.length % dim === 0, () => `${vectors.length} values are not whole vectors of ${dim}`);
  const vectorRows = vectors.length / dim;
  for (const r of rows) if (!(r >= 0 && r < vectorRows)) throw new AssertionFailed(`row ${r} outside the ${vectorRows} vectors`);
  const empty = noClusters(n);
  const minSize = Math.max(opts.minClusterSize, Math.ceil(opts.minClusterShare * n));
  if (n < 2 * minSize) return empty;

  const s = searchSample(vectors, dim, rows, opts);
  const m = s.sampleIdx.length;
  const score = (t: Tried) => t.silhouette - (opts.kPenalty ?? 0) * Math.log(t.k);
  const minSearchSize = Math.max(2, Math.round((minSize * s.searchIdx.length) / n));
  const kCap = Math.floor(s.searchIdx.length / minSearchSize);
  const tried = kGrid(opts.kMin, Math.min(opts.kMax, kCap), opts.kStep).map((k) => trySearchK(s, k));
  if (tried.length === 0) return empty;
  const warm = warmCandidate(s, prior, kCap, score);
  const top = Math.max(...tried.map(score), warm ? score(warm) : -Infinity);
  const warmStart = warm !== null && score(warm) >= top - opts.silhouetteTolerance;
  const chosen = warmStart ? warm! : tried.find((t) => score(t) >= top - opts.silhouetteTolerance)!;
  const final = finalKMeans(s, chosen.k, warmStart ? prior : undefined);
  let best = { k: chosen.k, silhouette: chosen.silhouette, centroids: final.centroids };
  if (opts.splitRefine) {
    const silPoints = s.silPos.map((p) => s.searchIdx[p]!);
    best = splitWhileSilhouetteRises(s.samplePoints, dim, best, s.dist, silPoints, Math.max(2, Math.round((minSize * m) / n)), opts);
  }
  const centroids = normaliseRows(best.centroids, dim);
  const assigned = assignRows(vectors, dim, rows, centroids, best.k, minSize, opts);
  return { k: best.k, centroids, ...assigned, silhouette: best.silhouette, tried, warmStart };
}

function nearest(points: Float32Array, o: number, centres: number[][], dim: number): number {
  let bc = 0;
  let bd = Infinity;
  centres.forEach((c, ci) => {
    let d = 0;
    for (let j = 0; j < dim; j++) d += (points[o + j]! - c[j]!) ** 2;
    if (d < bd) ((bd = d), (bc = ci));
  });
  return bc;
}

/**
 * Bisecting refinement (as bisecting k-means and X-means do, with the silhouette as the test):
 * k-means at a fixed k can settle with one centre over two groups and two over one, and more
 * seedings do not always undo it. Each round splits every cluster in two by 2-means on its sample
 * members and keeps the split that raises the mean silhouette (on the silhouette sample) the
 * most; rounds stop when no split raises it or a half would be smaller than `minSampleSize`.
 * `silPoints` are the sample positions of `dist`'s rows.
 */
export function splitWhileSilhouetteRises(
  points: Float32Array,
  dim: number,
  start: { k: number; silhouette: number; centroids: number[][] },
  dist: Float32Array,
  silPoints: number[],
  minSampleSize: number,
  opts: ClusterOptions,
): { k: number; silhouette: number; centroids: number[][] } {
  const m = points.length / dim;
  let centres = start.centroids.map((c) => [...c]);
  // Sample labels; a split divides one cluster's members between its halves (bisecting k-means).
  const labels = Int32Array.from({ length: m }, (_, i) => nearest(points, i * dim, centres, dim));
  const silLabels = () => silPoints.map((p) => labels[p]!);
  let score = silhouette(dist, silLabels(), centres.length);
  for (let round = 0; centres.length < opts.kMax; round++) {
    const members: number[][] = centres.map(() => []);
    labels.forEach((c, i) => members[c]!.push(i));
    let bestSplit: { at: number; pair: number[][]; halves: Int32Array; score: number } | null = null;
    members.forEach((idx, c) => {
      if (idx.length < 2 * minSampleSize) return;
      const res = runKMeans(points, dim, idx, seedCentres(points, dim, idx, 2, opts.seed + 31 * round + c), opts.maxIterations);
      const halves = Int32Array.from(res.clusters);
      const second = halves.reduce((a, x) => a + x, 0);
      if (Math.min(second, idx.length - second) < minSampleSize) return;
      const k = centres.length;
      idx.forEach((i, j) => {
        if (halves[j]) labels[i] = k;
      });
      const s = silhouette(dist, silLabels(), k + 1);
      idx.forEach((i) => (labels[i] = c));
      const price = opts.splitGain + (opts.kPenalty ?? 0) * Math.log((k + 1) / k);
      if (s > score + price && (!bestSplit || s > bestSplit.score)) bestSplit = { at: c, pair: res.centroids, halves, score: s };
    });
    if (!bestSplit) break;
    const { at, pair, halves, score: s } = bestSplit as { at: number; pair: number[][]; halves: Int32Array; score: number };
    const k = centres.length;
    members[at]!.forEach((i, j) => {
      if (halves[j]) labels[i] = k;
    });
    centres = [...centres.slice(0, at), pair[0]!, ...centres.slice(at + 1)];
    centres.push(pair[1]!);
    score = s;
  }
  return { k: centres.length, silhouette: score, centroids: centres };
}

export interface ClusteredRange {
  /** The rows clustered: those from `firstRow` on that have a vector. */
  rows: number[];
  clustering: Clustering;
  /** Kept clusters in id order, and each one's members as indices into `rows`. */
  clusters: number[];
  byCluster: Map<number, number[]>;
}

/** Cluster the rows from `firstRow` to the end that have a vector (`hasVector[r]` = 1); see clusterWindow. */
export function clusterRange(
  vectors: Float32Array,
  dim: number,
  hasVector: Uint8Array,
  firstRow: number,
  opts: ClusterOptions,
  prior?: readonly Float32Array[],
): ClusteredRange {
  return rangeOf(hasVector, firstRow, (rows) => clusterWindow(vectors, dim, rows, opts, prior));
}

/** The rows from `firstRow` on that have a vector, clustered by `cluster`, with each kept cluster's members. */
export function rangeOf(hasVector: Uint8Array, firstRow: number, cluster: (rows: number[]) => Clustering): ClusteredRange {
  const rows: number[] = [];
  for (let r = firstRow; r < hasVector.length; r++) if (hasVector[r]) rows.push(r);
  const clustering = cluster(rows);
  const byCluster = new Map<number, number[]>();
  clustering.assignment.forEach((c, i) => {
    if (c < 0) return;
    const list = byCluster.get(c) ?? [];
    list.push(i);
    byCluster.set(c, list);
  });
  return { rows, clustering, clusters: [...byCluster.keys()].sort((a, b) => a - b), byCluster };
}
