// The emergent clusters of a search answer: its rows clustered on their text vectors by the
// narratives' method (core/clustering/kmeans-by-silhouette.ts: k-means++ starts, a silhouette-chosen k,
// noise below the similarity floor, small clusters dissolved) with settings for a hundred-odd
// rows, on the kernel form of k-means (core/clustering/kernel-kmeans.ts): once the rows' Gram matrix
// is built, nothing costs more than n^2 additions. Computed where the search runs (a search worker
// holds the shared vectors), so this per-request k-means is spread over the cores; answer-narratives.ts
// then describes the clusters.
import { int8Gram } from '../../core/clustering/int8-gram.ts';
import { KernelKMeans, seedPositions } from '../../core/clustering/kernel-kmeans.ts';
import type { QuantizedVectors } from '../../core/vectors/quantized-vectors.ts';
import type { RankedRow } from '../../core/ranking/search.ts';
import { kGrid } from '../../core/clustering/kmeans-by-silhouette.ts';

/**
 * k from 2 to 6 on the grid 2, 3, 4, 6, each from its own k-means++ start (seed + k), at most
 * `maxIterations` Lloyd steps; the smallest k whose silhouette is within `silhouetteTolerance` of
 * the best wins and runs on to `finalIterations`. A cluster needs max(minClusterSize,
 * minClusterShare x rows) rows; a row less similar than noiseSimilarity to its centroid is noise.
 */
const EMERGENT_CLUSTER = {
  seed: 42,
  kMin: 2,
  kMax: 6,
  kStep: 1.5,
  maxIterations: 10,
  finalIterations: 20,
  silhouetteTolerance: 0.01,
  noiseSimilarity: 0.3,
  minClusterSize: 3,
  minClusterShare: 0.05,
};

/** Clustered rows (those with a text vector, in answer order), each one's cluster (-1: noise) and cosine to its centroid. */
export interface AnswerClusters {
  rows: number[];
  assignment: number[];
  similarity: number[];
}

export function clusterAnswer(vectors: QuantizedVectors, ranked: readonly RankedRow[], o = EMERGENT_CLUSTER): AnswerClusters {
  const rows = ranked.map((r) => r.row).filter((row) => vectors.hasVector(row));
  const n = rows.length;
  const none = { rows, assignment: new Array<number>(n).fill(-1), similarity: new Array<number>(n).fill(0) };
  const minSize = Math.max(o.minClusterSize, Math.ceil(o.minClusterShare * n));
  if (n < 2 * minSize) return none;
  const G = int8Gram(vectors, rows);
  const tried = kGrid(o.kMin, Math.min(o.kMax, Math.floor(n / minSize)), o.kStep).map((k) => {
    const run = new KernelKMeans(G, n, seedPositions(G, n, k, o.seed + k));
    const converged = run.iterate(o.maxIterations) < o.maxIterations;
    return { run, converged, silhouette: run.silhouette() };
  });
  const best = Math.max(...tried.map((t) => t.silhouette));
  const chosen = tried.find((t) => t.silhouette >= best - o.silhouetteTolerance);
  if (!chosen) return none;
  const { run } = chosen;
  if (!chosen.converged) run.iterate(o.finalIterations - o.maxIterations);
  // Each row to its nearest centroid by cosine; noise below the floor; small clusters dissolved.
  const assignment = new Array<number>(n);
  const similarity = new Array<number>(n);
  const sizes = new Uint32Array(run.k);
  for (let i = 0; i < n; i++) {
    let bc = 0;
    let bs = -Infinity;
    for (let c = 0; c < run.k; c++) {
      const s = run.cosineToCentroid(i, c);
      if (s > bs) ((bs = s), (bc = c));
    }
    similarity[i] = bs;
    assignment[i] = bs >= o.noiseSimilarity ? bc : -1;
    if (assignment[i]! >= 0) sizes[bc]!++;
  }
  for (let i = 0; i < n; i++) if (assignment[i]! >= 0 && sizes[assignment[i]!]! < minSize) assignment[i] = -1;
  return { rows, assignment, similarity };
}
