// The maps' clustering on an incremental run, after BERTopic's merge_models: the served generation's
// clusters are kept, and only the posts new to this run are placed.
//   1. each previous cluster keeps its members still in the window (a post that left the window, or
//      was deleted, leaves its cluster); its centre is their unit mean;
//   2. a new post joins the cluster whose centre is nearest by cosine when at least
//      noiseSimilarity close (the full clustering's noise rule);
//   3. the new posts left over are clustered among themselves (clusterWindow, the full run's
//      k-means by silhouette): a topic the previous clusters do not know becomes a new cluster;
//   4. every cluster, kept or new, must hold max(minClusterSize, minClusterShare x the window's
//      posts) members (the full run's admission rule), or it dissolves into noise;
//   5. centres are recomputed as the unit mean of the final members, and each member's similarity
//      is its cosine to its centre.
// Posts that were noise stay noise until a full run clusters the window anew. The cost follows the
// new posts and the members (a mean and a cosine each), not the window: no k search, no scan of
// every post against every centre.
import { dot } from '../dot.ts';
import { clusterWindow, type ClusteredRange, type ClusterOptions, type Clustering } from './kmeans-by-silhouette.ts';

export interface MergedRange extends ClusteredRange {
  /** Per cluster id: the previous cluster it continues (an index into `previous`), or null for a new one. */
  origin: Array<number | null>;
  /** New posts placed: joined a previous cluster, formed new clusters, left as noise. */
  placed: { joined: number; founded: number; noise: number };
}

/** Unit mean of the rows' vectors (zeros for none). */
function centreOf(vectors: Float32Array, dim: number, rows: readonly number[]): Float32Array {
  const c = new Float64Array(dim);
  for (const r of rows) for (let i = 0; i < dim; i++) c[i]! += vectors[r * dim + i]!;
  let n = 0;
  for (let i = 0; i < dim; i++) n += c[i]! * c[i]!;
  n = Math.sqrt(n) || 1;
  return Float32Array.from(c, (x) => x / n);
}

/**
 * Merge this run's new posts (`isNew`) of the window [firstRow, end) into the previous clusters
 * (`previous`: each one's member rows in this generation). Rows without a vector (`hasVector` 0,
 * masked rows included) are never members.
 */
export function mergeIntoPrevious(
  vectors: Float32Array,
  dim: number,
  hasVector: Uint8Array,
  firstRow: number,
  isNew: Uint8Array,
  previous: ReadonlyArray<readonly number[]>,
  opts: ClusterOptions,
): MergedRange {
  const rows: number[] = [];
  for (let r = firstRow; r < hasVector.length; r++) if (hasVector[r]) rows.push(r);
  const minSize = Math.max(opts.minClusterSize, Math.ceil(opts.minClusterShare * rows.length));
  // 1. The previous clusters' members still in the window.
  const kept = previous.map((members) => members.filter((r) => r >= firstRow && r < hasVector.length && hasVector[r]));
  const member = new Set<number>();
  for (const m of kept) for (const r of m) member.add(r);
  const centres = kept.map((m) => (m.length ? centreOf(vectors, dim, m) : null));
  // 2. New posts join the nearest previous cluster when close enough.
  const left: number[] = [];
  let joined = 0;
  for (const r of rows) {
    if (!isNew[r] || member.has(r)) continue;
    let best = -1;
    let bs = -Infinity;
    centres.forEach((c, p) => {
      if (!c) return;
      const s = dot(vectors, r * dim, c, 0, dim);
      if (s > bs) ((bs = s), (best = p));
    });
    if (best >= 0 && bs >= opts.noiseSimilarity) (kept[best]!.push(r), joined++);
    else left.push(r);
  }
  // 3. What is left, clustered among itself.
  const fresh: number[][] = [];
  if (left.length > 0) {
    const cl = clusterWindow(vectors, dim, left, opts);
    const by = new Map<number, number[]>();
    cl.assignment.forEach((c, i) => {
      if (c < 0) return;
      const list = by.get(c) ?? [];
      list.push(left[i]!);
      by.set(c, list);
    });
    for (const c of [...by.keys()].sort((a, b) => a - b)) fresh.push(by.get(c)!);
  }
  // 4. The admission rule over the window; 5. centres and similarities of the final members.
  const finals: Array<{ members: number[]; origin: number | null }> = [];
  kept.forEach((m, p) => {
    if (m.length >= minSize) finals.push({ members: m.sort((a, b) => a - b), origin: p });
  });
  let founded = 0;
  for (const m of fresh) {
    if (m.length < minSize) continue;
    finals.push({ members: m.sort((a, b) => a - b), origin: null });
    founded += m.length;
  }
  const position = new Map(rows.map((r, i) => [r, i]));
  const k = finals.length;
  const centroids = new Float32Array(k * dim);
  const assignment = new Int32Array(rows.length).fill(-1);
  const similarity = new Float32Array(rows.length);
  const byCluster = new Map<number, number[]>();
  finals.forEach((f, c) => {
    const centre = centreOf(vectors, dim, f.members);
    centroids.set(centre, c * dim);
    const idx: number[] = [];
    for (const r of f.members) {
      const i = position.get(r)!;
      assignment[i] = c;
      similarity[i] = dot(vectors, r * dim, centre, 0, dim);
      idx.push(i);
    }
    byCluster.set(c, idx);
  });
  const clustering: Clustering = {
    k,
    centroids,
    kept: finals.map(() => true),
    assignment,
    similarity,
    silhouette: NaN,
    tried: [],
    warmStart: true,
  };
  const newInWindow = rows.filter((r) => isNew[r]).length;
  return {
    rows,
    clustering,
    clusters: finals.map((_, c) => c),
    byCluster,
    origin: finals.map((f) => f.origin),
    placed: { joined, founded, noise: newInWindow - joined - founded },
  };
}
