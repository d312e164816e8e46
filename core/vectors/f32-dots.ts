// A fixed set of float32 rows held in a WebAssembly kernel's memory (f32-dots.wat), and one query's
// inner products with all of them by f32x4 SIMD: the chance floor's sample (core/ranking/chance-floor.ts),
// 2,000 rows x 128 dimensions a query. Written by hand because that plain JavaScript loop was 1.45 of
// the plan's 1.5 ms a query (5.6 ns a multiply-add); four lanes an instruction, and the rows copied
// into the kernel once, not per query. Sums are float32 in four lanes, added at the end: within
// 1e-6 of the float64 sum for unit vectors, far below what the floor's median and MAD resolve.
import { reserve, wasmInstance, type WasmMemory } from '../infra/wasm.ts';

interface Kernel {
  memory: WasmMemory;
  dots(q: number, x: number, n: number, dim: number, out: number): void;
}

export class F32Rows {
  private readonly kernel = wasmInstance<Kernel>(new URL('./f32-dots.wasm', import.meta.url));
  /** Dimensions as stored (padded with zeros to a multiple of 4). */
  private readonly stride: number;
  readonly n: number;

  /** `rows`: n rows of `dim` floats, row-major. */
  constructor(
    rows: Float32Array,
    readonly dim: number,
  ) {
    this.n = rows.length / dim;
    this.stride = Math.ceil(dim / 4) * 4;
    const { n, stride } = this;
    // Layout: the query (stride floats), the rows, then the n outputs.
    reserve(this.kernel.memory, (stride + n * stride + n) * 4);
    const x = new Float32Array(this.kernel.memory.buffer, stride * 4, n * stride);
    for (let i = 0; i < n; i++) x.set(rows.subarray(i * dim, (i + 1) * dim), i * stride);
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
