// The vector retriever's approximate path held against an exact scan on a fixed corpus: posts that
// arrive in bursts of near neighbours (a story's posts, written in time order), as the index stage
// builds its graphs (core/ranking/segment-graphs.ts, addPoints) and the search reads them (ef of the
// served depth). A change that drops the graph's recall (an insertion order, a smaller ef, other
// graph parameters) fails here.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import hnswlib from 'hnswlib-node';
import { addPoints, GRAPHS, searchGraphs, type LoadedGraphs } from '../../core/ranking/segment-graphs.ts';
import { vectorEf } from '../../core/ranking/search.ts';
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

test('recall@200 of story queries against an exact scan, on a graph built as the index stage builds it, at the served ef', () => {
  const { vectors, centres } = corpus(3);
  const { params, space } = GRAPHS.text;
  const index = new hnswlib.HierarchicalNSW(space, DIM);
  index.initIndex(ROWS, params.m, params.efConstruction, params.seed);
  assert.is(addPoints(index, vectors, DIM, 0, params.seed), ROWS);
  const graphs: LoadedGraphs = {
    dim: DIM,
    segments: [{ id: 's', firstRow: 0, rows: ROWS, points: ROWS, index, marked: new Set(), tails: [] }],
  };
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

test.run();
