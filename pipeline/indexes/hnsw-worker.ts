// Worker thread of the index stage: builds or extends one segment's HNSW graph, or finds the nearest
// neighbours of some rows across every segment's graph (for novelty and saturation). Vectors are read
// from the segments' files directly, so only file names cross the thread boundary.
import fs from 'node:fs';
import hnswlib from 'hnswlib-node';
import { GRAPHS, loadGraphs, searchGraphs, type LoadedGraphs } from '../../core/ranking/segment-graphs.ts';
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
  const { space, params } = GRAPHS[t.name];
  const index = new hnswlib.HierarchicalNSW(space, t.dim);
  const from = t.base?.rows ?? 0;
  if (t.base) {
    // An appended segment: the base's graph, its labels (rows) unchanged, grown by the new rows.
    index.readIndexSync(t.base.file);
    if (index.getMaxElements() < t.rows) index.resizeIndex(t.rows);
  } else index.initIndex(Math.max(t.rows, 1), params.m, params.efConstruction, params.seed);
  let points = index.getCurrentCount();
  const vectors = readRows(t.vectorsFile, t.dim, from, t.rows);
  for (let i = 0; i < t.rows - from; i++) {
    const v = vectors.subarray(i * t.dim, (i + 1) * t.dim);
    if (isZero(v)) continue;
    index.addPoint(Array.from(v), from + i);
    points++;
  }
  const tmp = `${t.out}.${process.pid}.tmp`;
  index.writeIndexSync(tmp);
  fs.renameSync(tmp, t.out);
  return { points, ms: Math.round(performance.now() - t0) };
}

let cached: { key: string; set: LoadedGraphs } | null = null;

function neighbours(t: NeighbourTask): NeighbourResult {
  const key = JSON.stringify(t.sources);
  if (cached?.key !== key) cached = { key, set: loadGraphs('text', t.dim, t.sources, t.masked) };
  const set = cached.set;
  const rows = t.locals.length;
  const bestEarlier = new Float64Array(rows).fill(NaN);
  const nearest = new Float64Array(rows * t.k).fill(NaN);
  // The locals are ascending: one read of their span.
  const lo = rows ? t.locals[0]! : 0;
  const vectors = rows ? readRows(t.vectorsFile, t.dim, lo, t.locals[rows - 1]! + 1) : new Float32Array(0);
  for (let i = 0; i < rows; i++) {
    const v = vectors.subarray((t.locals[i]! - lo) * t.dim, (t.locals[i]! - lo + 1) * t.dim);
    if (isZero(v)) {
      bestEarlier[i] = -1;
      continue;
    }
    const row = t.firstRow + t.locals[i]!;
    let n = 0;
    for (const nb of searchGraphs(set, v, t.k + 1, t.ef)) {
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
