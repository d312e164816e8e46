// HNSW indexes split into time shards: contiguous row ranges of the snapshot (rows are sorted by
// published_at), each its own hnswlib graph whose labels are global row numbers.
//
// Why shards: hnswlib-node inserts on one thread, and the graph of a million posts takes minutes to
// build; shards build side by side in worker threads. Because rows are in time order, a shard is a
// time range, and the boundaries are the window starts: a 30-day search reads only the shards
// of the last 30 days, whole and unfiltered, and their results are merged by similarity.
//   <name>-hnsw.json     { space, dim, params, shards: [{ file, firstRow, endRow, points }] }
//   <name>.<i>.hnsw      one graph per shard
import fs from 'node:fs';
import path from 'node:path';
import hnswlib from 'hnswlib-node';

export type HnswSpace = 'ip' | 'cosine';
export interface HnswParams {
  m: number;
  efConstruction: number;
  seed: number;
}
export interface ShardInfo {
  file: string;
  firstRow: number;
  endRow: number;
  points: number;
}
export interface ShardSet {
  space: HnswSpace;
  dim: number;
  params: HnswParams;
  shards: ShardInfo[];
}
export interface LoadedShard extends ShardInfo {
  index: InstanceType<typeof hnswlib.HierarchicalNSW>;
}
export interface LoadedShards extends ShardSet {
  loaded: LoadedShard[];
}
export interface Neighbour {
  row: number;
  sim: number;
}

// M 32, efConstruction 200: on the fixture's dense narrative clusters the graph's quality, not
// only the search breadth, limits recall. On the newest 200k rows of the 1M corpus, M 32 over
// M 16 lifts recall@10 at ef 200 from 0.93 to 0.95 for about 12% more build time, where
// efConstruction 400 costs 2x (ad-hoc sweeps; the 1M figures are in bench/RESULTS.md).
export const HNSW_PARAMS: HnswParams = { m: 32, efConstruction: 200, seed: 42 };
// The visual graph answers "which posts look like this one" (lookalikes, not the ranked search):
// hnswlib's defaults suffice, at a third of the text graph's build cost.
export const VISUAL_HNSW_PARAMS: HnswParams = { m: 16, efConstruction: 100, seed: 42 };

export function shardSetFile(dir: string, name: string): string {
  return path.join(dir, `${name}-hnsw.json`);
}

/**
 * Contiguous [first, end) row ranges split at the window starts (`cuts`: the first row of each
 * window), so every window is a run of whole shards and no search filters inside a graph (a
 * filtered hnswlib search calls back into JS for every candidate and loses recall). A range under
 * `minRows` joins its older neighbour (the oldest joins the next one).
 */
export function planShards(rows: number, cuts: readonly number[], minRows: number): Array<[number, number]> {
  const edges = [0, ...[...new Set(cuts)].filter((c) => c > 0 && c < rows).sort((a, b) => a - b), rows];
  const out: Array<[number, number]> = [];
  for (let i = 0; i + 1 < edges.length; i++) {
    const range: [number, number] = [edges[i]!, edges[i + 1]!];
    const last = out[out.length - 1];
    if (last && range[1] - range[0] < minRows) last[1] = range[1];
    else out.push(range);
  }
  if (out.length > 1 && out[0]![1] - out[0]![0] < minRows) out.splice(0, 2, [out[0]![0], out[1]![1]]);
  return out.length ? out : [[0, rows]];
}

export function loadShards(dir: string, name: string): LoadedShards {
  const set = JSON.parse(fs.readFileSync(shardSetFile(dir, name), 'utf8')) as ShardSet;
  const loaded = set.shards.map((s) => {
    const index = new hnswlib.HierarchicalNSW(set.space, set.dim);
    index.readIndexSync(path.join(dir, s.file));
    return { ...s, index };
  });
  return { ...set, loaded };
}

/**
 * The k nearest rows with row >= `start` across the shards (similarity = 1 - distance, i.e. the
 * inner product or the cosine), best first, ties by row. `ef` is the search breadth per shard.
 */
export function searchShards(set: LoadedShards, query: Float32Array | number[], k: number, ef: number, start = 0): Neighbour[] {
  const q = Array.isArray(query) ? query : Array.from(query);
  const out: Neighbour[] = [];
  for (const s of set.loaded) {
    if (s.points === 0 || s.endRow <= start) continue;
    const kk = Math.min(k, s.points);
    s.index.setEf(Math.max(ef, kk));
    const res = s.firstRow >= start ? s.index.searchKnn(q, kk) : s.index.searchKnn(q, kk, (row: number) => row >= start);
    res.neighbors.forEach((row, i) => out.push({ row, sim: 1 - res.distances[i]! }));
  }
  out.sort((a, b) => b.sim - a.sim || a.row - b.row);
  return out.slice(0, k);
}

export function shardPoints(set: ShardSet): number {
  return set.shards.reduce((a, s) => a + s.points, 0);
}
