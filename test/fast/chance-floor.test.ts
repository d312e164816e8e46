// The query's relevance floor (core/ranking/chance-floor.ts) and the common directions a folded
// word leaves out (core/vectors/common-directions.ts), on vectors made to crowd or to spread.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { chanceSimilarity } from '../../core/ranking/chance-floor.ts';
import { commonDirections, removeCommon } from '../../core/vectors/common-directions.ts';
import { QuantizedVectors } from '../../core/vectors/quantized-vectors.ts';
import { seededRandom } from '../../core/stats/seeded-random.ts';

// As the embedder's: in 128 dimensions random unit vectors are 3 sd = 0.27 apart by chance, under the fixed floor.
const DIM = 128;

/** `n` unit vectors: `lean` x a shared direction (axis 0) + standard normal noise, normalised. */
function rows(n: number, lean: number, seed: number): Float32Array {
  const u = seededRandom(seed);
  const noise = () => Math.sqrt(-2 * Math.log(u() || 1e-12)) * Math.cos(2 * Math.PI * u());
  const out = new Float32Array(n * DIM);
  for (let i = 0; i < n; i++) {
    let norm = 0;
    for (let c = 0; c < DIM; c++) {
      const x = (c === 0 ? lean / 0.29 : 0) + noise();
      out[i * DIM + c] = x;
      norm += x * x;
    }
    for (let c = 0; c < DIM; c++) out[i * DIM + c]! /= Math.sqrt(norm);
  }
  return out;
}

const unit = (v: number[]) => {
  const n = Math.hypot(...v);
  return v.map((x) => x / n);
};
const towardCrowd = unit([1, 0.3, ...new Array(DIM - 2).fill(0)]);
const away = unit([0, 0, 1, ...new Array(DIM - 3).fill(0)]);

test('crowded rows: a query leaning into the crowd needs more than chance; spread rows: the fixed floor stands', () => {
  const crowded = QuantizedVectors.fromFloats(rows(3000, 4, 1), DIM);
  const spread = QuantizedVectors.fromFloats(rows(3000, 0, 2), DIM);
  const floor = chanceSimilarity(crowded, towardCrowd);
  // The crowd's rows are ~0.77 along axis 0: by chance most rows are that similar to this query.
  assert.ok(floor > 0.6, `crowded, toward the crowd: ${floor}`);
  let above = 0;
  for (let row = 0; row < crowded.rows; row++) if (crowded.dot(towardCrowd, row) >= floor) above++;
  assert.ok(above < 0.01 * crowded.rows, `${above} of ${crowded.rows} rows pass the chance floor`);
  assert.ok(chanceSimilarity(crowded, away) < 0.35, `crowded, away from the crowd: ${chanceSimilarity(crowded, away)}`);
  assert.ok(chanceSimilarity(spread, towardCrowd) < 0.35, `spread: ${chanceSimilarity(spread, towardCrowd)}`);
});

test("a story that is a tenth of the rows does not raise its own query's floor (median and MAD, not mean and variance)", () => {
  const everyday = rows(2700, 0, 3);
  const story = new Float32Array(300 * DIM);
  for (let i = 0; i < 300; i++) story.set(away, i * DIM);
  const all = new Float32Array(3000 * DIM);
  all.set(everyday);
  all.set(story, everyday.length);
  const floor = chanceSimilarity(QuantizedVectors.fromFloats(all, DIM), away);
  assert.ok(floor < 0.35, `${floor}`);
  assert.is(chanceSimilarity(QuantizedVectors.fromFloats(new Float32Array(0), DIM), away), 0);
});

test('common directions: the mean direction first, orthonormal; a vector less them is orthogonal to each', () => {
  const dirs = commonDirections(rows(2000, 4, 4), DIM);
  assert.is(dirs.length, 3 * DIM, 'the mean and 2 principal directions');
  const dot = (a: ArrayLike<number>, b: ArrayLike<number>) =>
    Array.from({ length: DIM }, (_, c) => a[c]! * b[c]!).reduce((x, y) => x + y, 0);
  const row = (k: number) => dirs.subarray(k * DIM, (k + 1) * DIM);
  assert.ok(Math.abs(row(0)[0]!) > 0.99, `the mean direction is the crowd's axis: ${row(0)[0]}`);
  for (let a = 0; a < 3; a++) for (let b = 0; b < 3; b++) assert.ok(Math.abs(dot(row(a), row(b)) - (a === b ? 1 : 0)) < 1e-5, `${a}.${b}`);
  const v = Array.from(towardCrowd);
  removeCommon(v, dirs);
  for (let a = 0; a < 3; a++) assert.ok(Math.abs(dot(v, row(a))) < 1e-6);
  assert.ok(Math.hypot(...v) < 0.5, 'most of a crowd-leaning vector is common');
});

test.run();
