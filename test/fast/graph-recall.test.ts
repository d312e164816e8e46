// The vector retriever's approximate path held against an exact scan on a fixed corpus: posts that
// arrive in bursts of near neighbours (a story's posts, written in time order), as the index stage
// builds its graphs (core/ranking/segment-graphs.ts, addPoints) and the search reads them (ef of the
// served depth). A change that drops the graph's recall (an insertion order, a smaller ef, other
// graph parameters) fails here; and the served vector list (graphCandidates, then vectorCandidates:
// the graphs' deeper list ranked again by the int8 similarity) against the exact scan of the int8
// vectors that search's reference ranks by, for broad queries whose list ends among crowded rows,
// where a list cut in the graphs' float order misses rows the exact scan keeps.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import hnswlib from 'hnswlib-node';
import { addPoints, GRAPHS, searchGraphs, type LoadedGraphs } from '../../core/ranking/segment-graphs.ts';
import { graphCandidates, RANKING, vectorCandidates, vectorEf } from '../../core/ranking/search.ts';
import type { SearchIndex } from '../../core/ranking/search-index.ts';
import { exactNeighbours } from '../../core/ranking/exact-neighbours.ts';
import { QuantizedVectors } from '../../core/vectors/quantized-vectors.ts';
import { seededRandom } from '../../core/stats/seeded-random.ts';

const DIM = 32;
const ROWS = 12_000;
const STORIES = 60;
const DEPTH = 200;

/** Unit vectors: background rows spread over the sphere, and stories of 100 rows each written one after another near their centre. */
function corpus(seed: number): { vectors: Float32Array; centres: Float32Array[] } {
  const random = seededRandom(seed);
  const gauss = () => Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
  const unit = (v: Float32Array) => {
    let n = 0;
    for (const x of v) n += x * x;
    n = Math.sqrt(n);
    for (let i = 0; i < v.length; i++) v[i]! /= n;
    return v;
  };
  const centres = Array.from({ length: STORIES }, () => unit(Float32Array.from({ length: DIM }, gauss)));
  const vectors = new Float32Array(ROWS * DIM);
  const storyRows = 100;
  const burstEvery = Math.floor(ROWS / STORIES);
  for (let r = 0; r < ROWS; r++) {
    const s = Math.floor(r / burstEvery);
    const inBurst = r % burstEvery < storyRows && s < STORIES;
    const v = inBurst ? unit(Float32Array.from(centres[s]!, (x) => x + 0.12 * gauss())) : unit(Float32Array.from({ length: DIM }, gauss));
    vectors.set(v, r * DIM);
  }
  return { vectors, centres };
}

function exactTop(vectors: Float32Array, q: Float32Array, k: number): number[] {
  const sims: Array<{ row: number; sim: number }> = [];
  for (let r = 0; r < ROWS; r++) {
    let dot = 0;
    for (let i = 0; i < DIM; i++) dot += vectors[r * DIM + i]! * q[i]!;
    sims.push({ row: r, sim: dot });
  }
  return sims
    .sort((a, b) => b.sim - a.sim || a.row - b.row)
    .slice(0, k)
    .map((x) => x.row);
}

/** A graph of `vectors` built as the index stage builds a segment's. */
function graphOf(vectors: Float32Array): LoadedGraphs {
  const { params, space } = GRAPHS.text;
  const index = new hnswlib.HierarchicalNSW(space, DIM);
  index.initIndex(ROWS, params.m, params.efConstruction, params.seed);
  assert.is(addPoints(index, vectors, DIM, 0, params.seed), ROWS);
  return { dim: DIM, segments: [{ id: 's', firstRow: 0, rows: ROWS, points: ROWS, index, marked: new Set(), tails: [] }] };
}

test('recall@200 of story queries against an exact scan, on a graph built as the index stage builds it, at the served ef', () => {
  const { vectors, centres } = corpus(3);
  const graphs = graphOf(vectors);
  const random = seededRandom(9);
  let recall = 0;
  let worst = 1;
  for (const c of centres) {
    const q = Float32Array.from(c, (x) => x + 0.05 * (random() - 0.5));
    const want = new Set(exactTop(vectors, q, DEPTH));
    const got = searchGraphs(graphs, q, DEPTH, vectorEf(DEPTH));
    const r = got.filter((n) => want.has(n.row)).length / DEPTH;
    recall += r / centres.length;
    worst = Math.min(worst, r);
  }
  assert.ok(recall >= 0.97, `mean recall@200 ${recall.toFixed(4)}`);
  assert.ok(worst >= 0.8, `worst query's recall@200 ${worst.toFixed(2)}`);
});

test("the served vector list against the exact int8 scan: broad queries between stories, the list's end among crowded rows", () => {
  const { vectors, centres } = corpus(4);
  const graphs = graphOf(vectors);
  const int8 = QuantizedVectors.fromFloats(vectors, DIM);
  const index = { vectors: int8 } as unknown as SearchIndex;
  const random = seededRandom(12);
  let served = 0;
  let cutByGraph = 0;
  let queries = 0;
  for (let i = 0; i + 1 < centres.length; i += 2) {
    // Halfway between two stories and off to the side: the 200th row lies in a crowd of rows alike.
    const q = Float32Array.from(centres[i]!, (x, c) => x + centres[i + 1]![c]! + 0.6 * (random() - 0.5));
    let n = 0;
    for (const x of q) n += x * x;
    for (let c = 0; c < DIM; c++) q[c]! /= Math.sqrt(n);
    const plan = { vector: q, depth: DEPTH, start: 0 };
    const exact = exactNeighbours(int8, q, DEPTH).filter((v) => v.sim >= RANKING.vectorFloor);
    if (exact.length < DEPTH) continue;
    const want = new Set(exact.map((v) => v.row));
    const hits = graphCandidates(graphs, plan);
    served += vectorCandidates(index, plan, [], hits).filter((v) => want.has(v.row)).length / DEPTH;
    cutByGraph += searchGraphs(graphs, q, DEPTH, vectorEf(DEPTH)).filter((v) => want.has(v.row)).length / DEPTH;
    queries++;
  }
  assert.ok(queries >= 20, `${queries} queries with a full list`);
  served /= queries;
  cutByGraph /= queries;
  assert.ok(
    served >= 0.99,
    `served list's recall of the exact list ${served.toFixed(4)} (cut in the graphs' order: ${cutByGraph.toFixed(4)})`,
  );
  assert.ok(served > cutByGraph, `ranked again ${served.toFixed(4)} against cut by the graphs ${cutByGraph.toFixed(4)}`);
});

test.run();
