// Worker thread of the index stage: builds or extends one segment's HNSW graph (and searches it for
// the new rows' neighbours while it holds it), or finds the nearest neighbours of some rows in other
// segments' graphs (for novelty and saturation). Vectors are read from the segments' files directly,
// so only file names cross the thread boundary.
import fs from 'node:fs';
import hnswlib from 'hnswlib-node';
import { addPoints, GRAPHS, loadGraphs, searchGraphs, type LoadedGraphs, type SegmentGraph } from '../../core/ranking/segment-graphs.ts';
import { answerTasks } from '../../core/infra/workers/task-worker.ts';
import type { BuildResult, BuildTask, HnswResult, HnswTask, NeighbourLists, NeighbourQuery, NeighbourTask } from './hnsw-task.ts';

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

/** The k nearest of each queried row in `set`. */
function nearestLists(set: LoadedGraphs, q: NeighbourQuery): NeighbourLists {
  const n = q.locals.length;
  const out: NeighbourLists = {
    rows: new Int32Array(n * q.k).fill(-1),
    sims: new Float64Array(n * q.k).fill(NaN),
    noVector: new Uint8Array(n),
  };
  // The locals are ascending: one read of their span.
  const lo = n ? q.locals[0]! : 0;
  const vectors = n ? readRows(q.vectorsFile, set.dim, lo, q.locals[n - 1]! + 1) : new Float32Array(0);
  for (let i = 0; i < n; i++) {
    const v = vectors.subarray((q.locals[i]! - lo) * set.dim, (q.locals[i]! - lo + 1) * set.dim);
    if (isZero(v)) {
      out.noVector[i] = 1;
      continue;
    }
    searchGraphs(set, v, q.k, q.ef).forEach((nb, j) => {
      out.rows[i * q.k + j] = nb.row;
      out.sims[i * q.k + j] = nb.sim;
    });
  }
  return out;
}

function build(t: BuildTask): BuildResult {
  const t0 = performance.now();
  const { space, params } = GRAPHS[t.name];
  const index = new hnswlib.HierarchicalNSW(space, t.dim);
  const from = t.base?.rows ?? t.from ?? 0;
  const capacity = Math.max(t.rows - (t.from ?? 0), 1);
  if (t.base) {
    // An appended segment: the base's graph, its labels (rows) unchanged, grown by the new rows.
    index.readIndexSync(t.base.file);
    if (index.getMaxElements() < capacity) index.resizeIndex(capacity);
  } else index.initIndex(capacity, params.m, params.efConstruction, params.seed);
  let points = index.getCurrentCount();
  const vectors = readRows(t.vectorsFile, t.dim, from, t.rows);
  points += addPoints(index, vectors, t.dim, from, params.seed + from);
  const tmp = `${t.out}.${process.pid}.tmp`;
  index.writeIndexSync(tmp);
  fs.renameSync(tmp, t.out);
  let lists: NeighbourLists | null = null;
  if (t.search && points > 0) {
    // The graph as written, its masked rows marked deleted in memory only (as a reader marks them).
    const own: SegmentGraph = { id: '', firstRow: t.firstRow, rows: t.rows, points, index, marked: new Set(), tails: [] };
    const set = loadGraphs(t.name, t.dim, [{ id: '', dir: '', firstRow: t.firstRow, rows: t.rows, points }], t.search.masked, () => own);
    lists = nearestLists(set, t.search);
  }
  return { points, ms: Math.round(performance.now() - t0), lists };
}

/**
 * Graphs of segments this worker has read, by id, for the stage's life (a segment's files never
 * change, deletions only grow its marks): a full run's tasks for one segment search every other
 * segment's graph, so each worker reads each graph once, as one search of all graphs did.
 */
const held = new Map<string, SegmentGraph>();

function neighbours(t: NeighbourTask): NeighbourLists {
  const set = loadGraphs('text', t.dim, t.sources, t.masked, (id) => held.get(id));
  for (const g of set.segments) held.set(g.id, g);
  return nearestLists(set, t);
}

const transfer = (l: NeighbourLists) => [l.rows.buffer as ArrayBuffer, l.sims.buffer as ArrayBuffer, l.noVector.buffer as ArrayBuffer];

answerTasks<HnswTask, HnswResult>((task) => {
  if (task.kind === 'build') {
    const r = build(task);
    return { result: r, transfer: r.lists ? transfer(r.lists) : [] };
  }
  const r = neighbours(task);
  return { result: r, transfer: transfer(r) };
});
