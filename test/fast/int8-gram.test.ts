// The Gram matrix of int8 rows (core/clustering/int8-gram.ts, a WebAssembly SIMD kernel): every
// entry the exact integer product of the two rows' codes times their scales, for row widths that
// are and are not a multiple of the kernel's 16-byte step, answers of 0 to 300 rows (the search
// limit's maximum) in any order and with repeats, codes at both extremes (the committed
// binary is its text compiled: wasm-kernels.test.ts).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { int8Gram } from '../../core/clustering/int8-gram.ts';
import { QuantizedVectors } from '../../core/vectors/quantized-vectors.ts';

let seed = 5;
const rand = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;

function vectorsOf(rows: number, dim: number): QuantizedVectors {
  const codes = new Int8Array(rows * dim);
  for (let i = 0; i < codes.length; i++) {
    const u = rand();
    // A tenth of the codes at the extremes, where a wrong widening or a saturating add would show.
    codes[i] = u < 0.05 ? -127 : u < 0.1 ? 127 : Math.round(rand() * 254) - 127;
  }
  const scales = Float32Array.from({ length: rows }, () => 0.001 + rand() * 0.01);
  return new QuantizedVectors(dim, codes, scales);
}

test('int8Gram: each entry the exact integer product of the codes times both scales, symmetric', () => {
  const cases: Array<[dim: number, n: number]> = [
    [128, 100],
    [128, 300],
    [100, 37], // padded to 112: the pad must add nothing, after a larger call left other bytes there
    [16, 2],
    [3, 5],
    [128, 1],
    [64, 0],
  ];
  for (const [dim, n] of cases) {
    const v = vectorsOf(400, dim);
    const rows = Array.from({ length: n }, (_, i) => (i % 9 === 8 ? (i * 7) % 400 : Math.floor(rand() * 400)));
    const G = int8Gram(v, rows);
    assert.is(G.length, n * n, `dim ${dim}, n ${n}: size`);
    for (let a = 0; a < n; a++)
      for (let b = a; b < n; b++) {
        let dot = 0;
        for (let j = 0; j < dim; j++) dot += v.codes[rows[a]! * dim + j]! * v.codes[rows[b]! * dim + j]!;
        const want = dot * v.scales[rows[a]!]! * v.scales[rows[b]!]!;
        if (G[a * n + b] !== want || G[b * n + a] !== want)
          assert.unreachable(`dim ${dim}, n ${n}: G[${a}, ${b}] = ${G[a * n + b]} / G[${b}, ${a}] = ${G[b * n + a]}, want ${want}`);
      }
  }
});

test.run();
