// The emergent clusters of a search answer: its rows clustered on their text vectors, with the
// narratives' clustering (pipeline/narratives/cluster.ts) set for a hundred-odd rows. Computed
// where the search runs (a search worker holds the shared vectors), so this per-request k-means
// is spread over the cores; the main thread then describes the clusters (search-narratives.ts).
import { clusterWindow, CLUSTER_DEFAULTS, type ClusterOptions } from '../pipeline/narratives/cluster.ts';
import type { SearchIndex } from '../core/ranking/search-index.ts';
import { hasNonZero } from '../core/vector-space.ts';
import { search, type RankedRow, type SearchParams } from '../core/ranking/search.ts';

// Every row in the k search; k from 2 to 6 on the grid 2, 3, 4, 6 (silhouette), typed-array
// Lloyd iterations, no bisecting refinement: a few milliseconds per answer. A cluster needs 3
// rows or 5% of them.
export const EMERGENT_CLUSTER: ClusterOptions = {
  ...CLUSTER_DEFAULTS, sample: 300, searchSample: 300, silhouetteSample: 150, kMin: 2, kMax: 6, kStep: 1.5, maxIterations: 10,
  minClusterSize: 3, minClusterShare: 0.05, splitRefine: false, engine: 'lloyd',
};

/** Clustered rows (those with a text vector, in answer order), each one's cluster (-1: noise) and cosine to its centroid. */
export interface AnswerClusters { rows: number[]; assignment: number[]; similarity: number[] }

export function clusterAnswer(vectors: Float32Array, dim: number, ranked: readonly RankedRow[]): AnswerClusters {
  const rows = ranked.map((r) => r.row).filter((row) => hasNonZero(vectors, dim, row));
  const cl = clusterWindow(vectors, dim, rows, EMERGENT_CLUSTER);
  return { rows, assignment: Array.from(cl.assignment), similarity: Array.from(cl.similarity) };
}

export interface SearchOutcome { ranked: RankedRow[]; clusters: AnswerClusters }

/** The ranking core and the answer's clusters: what a search worker does per request. */
export function searchWithClusters(index: SearchIndex, p: SearchParams): SearchOutcome {
  const ranked = search(index, p);
  return { ranked, clusters: clusterAnswer(index.vectors, index.textSpace.dim, ranked) };
}
