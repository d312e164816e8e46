// The Gram matrix (all inner products) of a search answer's rows from their int8 codes
// (core/vectors/quantized-vectors.ts): the integer products exactly, by a WebAssembly SIMD kernel
// (int8-gram.wat), times the two rows' scales. Written by hand because it is the per-request core
// of the emergent clustering (answer-clusters.ts): in JavaScript the products cost more than the
// whole k-means that follows (0.55-0.8 ms of a search at 100 rows of 128 dimensions), where SIMD
// does sixteen byte products an instruction. Exact integer sums also make G exact up to the two
// final roundings, where summing decoded floats rounded at every step.
import { reserve, wasmInstance, type WasmMemory } from '../infra/wasm.ts';
import type { QuantizedVectors } from '../vectors/quantized-vectors.ts';

interface Kernel {
  memory: WasmMemory;
  gram(x: number, n: number, dim: number, out: number): void;
}

let kernel: Kernel | null = null;

/** This thread's instance (each worker makes its own). */
function loadKernel(): Kernel {
  return (kernel ??= wasmInstance<Kernel>(new URL('./int8-gram.wasm', import.meta.url)));
}

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
  reserve(k.memory, need);
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
