// int8 row vectors (core/vectors/quantized-vectors.ts): similarities within the documented error of the
// float32 ones, rows without a vector recognised, the file path equal to the in-memory path.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { QuantizedVectors } from '../../core/vectors/quantized-vectors.ts';

const dim = 128;
let seed = 3;
const rand = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31 - 0.5;
const unit = () => {
  const v = Array.from({ length: dim }, rand);
  const n = Math.hypot(...v);
  return v.map((x) => x / n);
};

test('int8 similarities stay within 5e-3 of the float32 ones; zero rows have no vector; the file path quantises the same', () => {
  const rows = 300;
  const floats = new Float32Array(rows * dim);
  for (let r = 0; r < rows; r++) if (r % 7 !== 3) floats.set(unit(), r * dim);
  const q = QuantizedVectors.fromFloats(floats, dim);
  let worst = 0;
  for (let t = 0; t < 20; t++) {
    const query = Float32Array.from(unit());
    for (let r = 0; r < rows; r++) {
      let exact = 0;
      for (let j = 0; j < dim; j++) exact += query[j]! * floats[r * dim + j]!;
      worst = Math.max(worst, Math.abs(q.dot(query, r) - exact));
    }
  }
  assert.ok(worst < 5e-3, `largest error ${worst}`);
  for (let r = 0; r < rows; r++) assert.is(q.hasVector(r), r % 7 !== 3, `row ${r}`);
  const out = new Float64Array(dim);
  q.decodeInto(0, out, 0);
  assert.ok(
    out.every((x, j) => Math.abs(x - floats[j]!) <= q.scales[0]! / 2 + 1e-9),
    'decoded within half a step',
  );
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'qv-')), 'v.f32');
  fs.writeFileSync(file, Buffer.from(floats.buffer));
  const viaFile = QuantizedVectors.fromFile(file, dim, true);
  assert.ok(viaFile.codes.buffer instanceof SharedArrayBuffer);
  assert.equal(Array.from(viaFile.codes), Array.from(q.codes));
  assert.equal(Array.from(viaFile.scales), Array.from(q.scales));
  fs.rmSync(path.dirname(file), { recursive: true });
});

test.run();
