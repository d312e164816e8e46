// The Gram matrix (all inner products) of a search answer's rows from their int8 codes
// (core/vectors/quantized-vectors.ts): the integer products exactly, by a WebAssembly SIMD kernel
// (int8-gram.wat), times the two rows' scales. Written by hand because it is the per-request core
// of the emergent clustering (answer-clusters.ts): in JavaScript the products cost more than the
// whole k-means that follows (0.55-0.8 ms of a search at 100 rows of 128 dimensions), where SIMD
// does sixteen byte products an instruction. Exact integer sums also make G exact up to the two
// final roundings, where summing decoded floats rounded at every step.
import fs from 'node:fs';
import type { QuantizedVectors } from '../vectors/quantized-vectors.ts';

// Node's WebAssembly global, as far as this module uses it (@types/node 20 leaves it to lib.dom).
declare const WebAssembly: {
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object) => { exports: object };
};

interface Kernel {
  memory: { buffer: ArrayBuffer; grow(pages: number): number };
  gram(x: number, n: number, dim: number, out: number): void;
}

let kernel: Kernel | null = null;

/** This thread's instance (each worker compiles its own: the module is a few hundred bytes). */
function loadKernel(): Kernel {
  if (!kernel) {
    const bytes = fs.readFileSync(new URL('./int8-gram.wasm', import.meta.url));
    kernel = new WebAssembly.Instance(new WebAssembly.Module(bytes)).exports as Kernel;
  }
  return kernel;
}

const PAGE = 65_536;

/** G[a * n + b] = <row a, row b> as the codes decode (code x scale), for the `rows` of `vectors`. */
export function int8Gram(vectors: QuantizedVectors, rows: readonly number[]): Float64Array {
  const { dim, codes, scales } = vectors;
  const n = rows.length;
  const G = new Float64Array(n * n);
  if (n === 0) return G;
  // Rows padded with zero codes to a multiple of 16 bytes (zeros add nothing to a product).
  const stride = Math.ceil(dim / 16) * 16;
  const outAt = n * stride;
  const need = outAt + n * n * 4;
  const k = loadKernel();
  if (k.memory.buffer.byteLength < need) k.memory.grow(Math.ceil((need - k.memory.buffer.byteLength) / PAGE));
  const x = new Int8Array(k.memory.buffer, 0, outAt);
  if (stride !== dim) x.fill(0);
  for (let i = 0; i < n; i++) {
    const o = rows[i]! * dim;
    x.set(codes.subarray(o, o + dim), i * stride);
  }
  k.gram(0, n, stride, outAt);
  const dots = new Int32Array(k.memory.buffer, outAt, n * n);
  for (let a = 0; a < n; a++) {
    const sa = scales[rows[a]!]!;
    for (let b = a; b < n; b++) G[a * n + b] = G[b * n + a] = dots[a * n + b]! * sa * scales[rows[b]!]!;
  }
  return G;
}
