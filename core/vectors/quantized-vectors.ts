// Row vectors held as int8 codes with one float scale per row (symmetric scalar quantisation, as
// Elasticsearch's int8_hnsw and Lucene's scalar quantisation do), for the server's per-answer
// vector work: the query similarity of each fused candidate and the Gram matrix of the rows it
// clusters. The HNSW graphs keep their own float32 copy for the search itself, so the float
// vectors were held twice at serve time; a quarter of the memory here (488 -> 126 MB at 1M posts).
// For unit vectors of 128 dimensions the error of a similarity is about 1e-3 (docs/fields.md).
import fs from 'node:fs';

export class QuantizedVectors {
  constructor(
    readonly dim: number,
    /** rows x dim codes: round(x / scale), in -127..127. */
    readonly codes: Int8Array,
    /** Per row: max |x| / 127; 0 for a row without a vector (all zeros). */
    readonly scales: Float32Array,
  ) {}

  get rows(): number {
    return this.scales.length;
  }

  /** Whether the row has a vector (an all-zero row has none). */
  hasVector(row: number): boolean {
    return this.scales[row]! !== 0;
  }

  /** Inner product of `q` with the row's vector as decoded. */
  dot(q: ArrayLike<number>, row: number): number {
    const { dim, codes } = this;
    const o = row * dim;
    let s0 = 0;
    let s1 = 0;
    let j = 0;
    for (; j + 1 < dim; j += 2) {
      s0 += q[j]! * codes[o + j]!;
      s1 += q[j + 1]! * codes[o + j + 1]!;
    }
    for (; j < dim; j++) s0 += q[j]! * codes[o + j]!;
    return (s0 + s1) * this.scales[row]!;
  }

  /** The row's decoded vector written into `out` from `at`. */
  decodeInto(row: number, out: Float64Array, at: number): void {
    const { dim, codes } = this;
    const scale = this.scales[row]!;
    for (let j = 0, o = row * dim; j < dim; j++) out[at + j] = codes[o + j]! * scale;
  }

  /** Quantise float32 rows (row-major, `dim` each); with `shared`, into SharedArrayBuffers. */
  static fromFloats(floats: Float32Array, dim: number, shared = false): QuantizedVectors {
    const rows = floats.length / dim;
    const q = QuantizedVectors.allocate(rows, dim, shared);
    q.quantiseRows(floats, 0, rows);
    return q;
  }

  /** Quantise a row-major float32 file in 16 MB chunks (the floats are never held whole). */
  static fromFile(file: string, dim: number, shared = false): QuantizedVectors {
    const bytes = fs.statSync(file).size;
    if (bytes % (dim * 4) !== 0) throw new Error(`${file}: ${bytes} bytes is not a whole number of ${dim}-dimensional float32 rows`);
    const q = QuantizedVectors.allocate(bytes / (dim * 4), dim, shared);
    q.quantiseFile(file, 0);
    return q;
  }

  /** Rows of no vector yet (zeros), to fill with quantiseFile() and copyRows(). */
  static allocate(rows: number, dim: number, shared: boolean): QuantizedVectors {
    const codes = shared ? new Int8Array(new SharedArrayBuffer(rows * dim)) : new Int8Array(rows * dim);
    const scales = shared ? new Float32Array(new SharedArrayBuffer(rows * 4)) : new Float32Array(rows);
    return new QuantizedVectors(dim, codes, scales);
  }

  /** A row-major float32 file's rows quantised into rows first.. (16 MB at a time); returns its row count. */
  quantiseFile(file: string, first: number): number {
    const { dim } = this;
    const bytes = fs.statSync(file).size;
    if (bytes % (dim * 4) !== 0) throw new Error(`${file}: ${bytes} bytes is not a whole number of ${dim}-dimensional float32 rows`);
    const rows = bytes / (dim * 4);
    if (first + rows > this.rows) throw new Error(`${file}: ${rows} rows from row ${first} do not fit in ${this.rows}`);
    const chunkRows = Math.max(1, Math.floor((16 << 20) / (dim * 4)));
    const buf = new Float32Array(chunkRows * dim);
    const fd = fs.openSync(file, 'r');
    try {
      for (let r = 0; r < rows; r += chunkRows) {
        const n = Math.min(chunkRows, rows - r);
        const want = n * dim * 4;
        for (let got = 0; got < want;) {
          const k = fs.readSync(fd, new Uint8Array(buf.buffer, got, want - got), 0, want - got, r * dim * 4 + got);
          if (k === 0) throw new Error(`${file}: file ended at row ${r}`);
          got += k;
        }
        this.quantiseRows(buf, first + r, n);
      }
    } finally {
      fs.closeSync(fd);
    }
    return rows;
  }

  /** Rows [from, from + n) of `src` copied to rows [to, to + n). */
  copyRows(src: QuantizedVectors, from: number, to: number, n: number): void {
    this.codes.set(src.codes.subarray(from * this.dim, (from + n) * this.dim), to * this.dim);
    this.scales.set(src.scales.subarray(from, from + n), to);
  }

  /** The row has no vector from now on (a masked row: never a candidate, similarity 0). */
  clearRow(row: number): void {
    this.scales[row] = 0;
    this.codes.fill(0, row * this.dim, (row + 1) * this.dim);
  }

  /** Rows first..first+n from `floats` (which starts at row `first`). */
  private quantiseRows(floats: Float32Array, first: number, n: number): void {
    const { dim, codes, scales } = this;
    for (let i = 0; i < n; i++) {
      let max = 0;
      for (let j = 0; j < dim; j++) max = Math.max(max, Math.abs(floats[i * dim + j]!));
      const scale = Math.fround(max / 127);
      scales[first + i] = scale;
      if (scale === 0) continue;
      const o = (first + i) * dim;
      for (let j = 0; j < dim; j++) codes[o + j] = Math.round(floats[i * dim + j]! / scale);
    }
  }
}
