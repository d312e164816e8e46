// Float32 rows held in a WebAssembly kernel's memory (f32-dots.wat), and inner products with them by
// f32x4 SIMD. Written by hand because these are the two hottest loops of plain multiply-adds:
//   F32Rows     one query against fixed rows: the chance floor's sample (core/ranking/chance-floor.ts),
//               2,000 rows x 128 dimensions a query; in JavaScript 1.45 of the plan's 1.5 ms;
//   F32Nearest  every row of a window against fixed centres: the narratives' micro-clusters
//               (core/clustering/stories.ts), 200 centres x 128 dimensions a post; in JavaScript
//               63% of the narratives stage at 1M posts (159 of 252 s).
// Four lanes an instruction, the fixed side copied into the kernel once. Sums are float32 in four
// lanes, added at the end: within 1e-6 of the float64 sum for unit vectors.
import { reserve, wasmInstance, type WasmMemory } from '../infra/wasm.ts';

interface Kernel {
  memory: WasmMemory;
  dots(q: number, x: number, n: number, dim: number, out: number): void;
  nearest(c: number, k: number, x: number, n: number, dim: number, out: number): void;
}

const kernelOf = () => wasmInstance<Kernel>(new URL('./f32-dots.wasm', import.meta.url));

/** Floats a row takes in the kernel: `dim` padded with zeros to a multiple of 4. */
const strideOf = (dim: number) => Math.ceil(dim / 4) * 4;

/** Copy row `row` of `src` (row-major, `dim` wide) to slot `slot` of `dst` (`stride` wide; the padding stays zero). */
function copyRow(src: Float32Array, row: number, dim: number, dst: Float32Array, slot: number, stride: number): void {
  dst.set(src.subarray(row * dim, (row + 1) * dim), slot * stride);
}

/**
 * Fixed rows in a kernel instance of their own: `count` rows of `dim` floats, each `stride` wide
 * (padded with zeros to a multiple of 4), from float `at` of its memory on; `floats` floats in all.
 */
class HeldRows {
  protected readonly kernel = kernelOf();
  protected readonly stride: number;
  readonly count: number;

  constructor(
    rows: Float32Array,
    readonly dim: number,
    layout: { at: (stride: number) => number; floats: (stride: number, count: number) => number },
  ) {
    this.count = rows.length / dim;
    const stride = (this.stride = strideOf(dim));
    reserve(this.kernel.memory, layout.floats(stride, this.count) * 4);
    const dst = new Float32Array(this.kernel.memory.buffer, layout.at(stride) * 4, this.count * stride);
    for (let i = 0; i < this.count; i++) copyRow(rows, i, dim, dst, i, stride);
  }
}

/** One query against fixed rows (`rows`: n rows of `dim` floats, row-major). */
export class F32Rows extends HeldRows {
  constructor(rows: Float32Array, dim: number) {
    // Layout: the query (stride floats), the rows, then the n outputs.
    super(rows, dim, { at: (stride) => stride, floats: (stride, n) => stride + n * stride + n });
  }

  get n(): number {
    return this.count;
  }

  /** <q, row i> for every row, into `out` (n entries). */
  dotsInto(q: ArrayLike<number>, out: Float64Array): void {
    const { n, stride, dim, kernel } = this;
    const buffer = kernel.memory.buffer;
    const query = new Float32Array(buffer, 0, stride);
    for (let c = 0; c < dim; c++) query[c] = q[c]!;
    const at = (stride + n * stride) * 4;
    kernel.dots(0, stride * 4, n, stride, at);
    const dots = new Float32Array(buffer, at, n);
    for (let i = 0; i < n; i++) out[i] = dots[i]!;
  }
}

/** Rows copied into the kernel at a time. */
const CHUNK = 4_096;

/** Rows against fixed centres (`centres`: k rows of `dim` floats, row-major). */
export class F32Nearest extends HeldRows {
  constructor(centres: Float32Array, dim: number) {
    // Layout: the centres, a chunk of rows, the chunk's answers.
    super(centres, dim, { at: () => 0, floats: (stride, k) => k * stride + CHUNK * stride + CHUNK });
  }

  get k(): number {
    return this.count;
  }

  /** out[i] = the centre nearest row rows[i] of `vectors` (row-major, dim wide) by inner product, the first of equals. */
  nearestInto(vectors: Float32Array, rows: ArrayLike<number>, out: Int32Array): void {
    const { k, stride, dim, kernel } = this;
    const xAt = k * stride * 4;
    const outAt = xAt + CHUNK * stride * 4;
    const x = new Float32Array(kernel.memory.buffer, xAt, CHUNK * stride);
    const answers = new Int32Array(kernel.memory.buffer, outAt, CHUNK);
    for (let from = 0; from < rows.length; from += CHUNK) {
      const m = Math.min(CHUNK, rows.length - from);
      for (let i = 0; i < m; i++) copyRow(vectors, rows[from + i]!, dim, x, i, stride);
      kernel.nearest(0, k, xAt, m, stride, outAt);
      out.set(answers.subarray(0, m), from);
    }
  }
}
