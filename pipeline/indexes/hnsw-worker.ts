// Worker thread of the index stage: builds one HNSW shard, or finds the nearest neighbours of a
// range of rows across all shards (for novelty and saturation). Vectors are read from the
// features' file directly, so only file names cross the thread boundary.
import fs from 'node:fs';
import hnswlib from 'hnswlib-node';
import { loadShards, searchShards, type LoadedShards } from '../../core/ranking/hnsw-shards.ts';
import { answerTasks } from '../../core/workers/task-worker.ts';
import type { BuildResult, BuildTask, HnswResult, HnswTask, NeighbourResult, NeighbourTask } from './hnsw-task.ts';

function readRows(file: string, dim: number, firstRow: number, endRow: number): Float32Array {
  const out = new Float32Array((endRow - firstRow) * dim);
  const fd = fs.openSync(file, 'r');
  try {
    const bytes = new Uint8Array(out.buffer);
    let at = 0;
    while (at < bytes.length) {
      const n = fs.readSync(fd, bytes, at, bytes.length - at, firstRow * dim * 4 + at);
      if (n === 0) throw new Error(`${file}: ends before row ${endRow}`);
      at += n;
    }
  } finally {
    fs.closeSync(fd);
  }
  return out;
}

const isZero = (v: Float32Array) => !v.some((x) => x !== 0);

function build(t: BuildTask): BuildResult {
  const t0 = performance.now();
  const vectors = readRows(t.vectorsFile, t.dim, t.firstRow, t.endRow);
  const rows = t.endRow - t.firstRow;
  const index = new hnswlib.HierarchicalNSW(t.space, t.dim);
  index.initIndex(Math.max(rows, 1), t.params.m, t.params.efConstruction, t.params.seed);
  let points = 0;
  for (let i = 0; i < rows; i++) {
    const v = vectors.subarray(i * t.dim, (i + 1) * t.dim);
    if (isZero(v)) continue;
    index.addPoint(Array.from(v), t.firstRow + i);
    points++;
  }
  const tmp = `${t.out}.${process.pid}.tmp`;
  index.writeIndexSync(tmp);
  fs.renameSync(tmp, t.out);
  return { points, ms: Math.round(performance.now() - t0) };
}

let cached: { key: string; set: LoadedShards } | null = null;

function neighbours(t: NeighbourTask): NeighbourResult {
  const key = `${t.dir}\n${t.name}`;
  if (cached?.key !== key) cached = { key, set: loadShards(t.dir, t.name) };
  const set = cached.set;
  const rows = t.endRow - t.firstRow;
  const vectors = readRows(t.vectorsFile, set.dim, t.firstRow, t.endRow);
  const bestEarlier = new Float64Array(rows).fill(NaN);
  const nearest = new Float64Array(rows * t.k).fill(NaN);
  for (let i = 0; i < rows; i++) {
    const v = vectors.subarray(i * set.dim, (i + 1) * set.dim);
    if (isZero(v)) {
      bestEarlier[i] = -1;
      continue;
    }
    const row = t.firstRow + i;
    let n = 0;
    for (const nb of searchShards(set, v, t.k + 1, t.ef)) {
      if (nb.row === row) continue;
      if (nb.row < row && !(bestEarlier[i]! >= nb.sim)) bestEarlier[i] = nb.sim;
      if (n < t.k) nearest[i * t.k + n++] = nb.sim;
    }
  }
  return { bestEarlier, nearest };
}

answerTasks<HnswTask, HnswResult>((task) => {
  if (task.kind === 'build') return { result: build(task) };
  const r = neighbours(task);
  return { result: r, transfer: [r.bestEarlier.buffer as ArrayBuffer, r.nearest.buffer as ArrayBuffer] };
});
