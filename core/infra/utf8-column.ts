// A nullable string per row for a million rows in one UTF-8 buffer plus offsets, decoded only for
// the rows a response returns: titles and descriptions held as JS strings would take twice the
// memory and millions of heap objects for the collector to walk.
import { toShared } from './shared-array.ts';

/** Text is written into blocks of this size (one per long value), not one Buffer per row. */
const BLOCK = 1 << 20;

/** A sealed column's memory: what shared() hands to another thread and the constructor adopts. */
export interface Utf8ColumnParts {
  bytes: Uint8Array;
  offsets: Uint32Array;
  nulls: Uint8Array;
}

export class Utf8Column {
  private blocks: Buffer[] = [];
  private block: Buffer | null = null;
  private blockUsed = 0;
  private size = 0;
  private bytes: Buffer | null = null;
  /** Row i is bytes[offsets[i] .. offsets[i+1]); a null is marked in `nulls`. */
  readonly offsets: Uint32Array;
  readonly nulls: Uint8Array;
  private next = 0;

  /** A column to fill with set() then seal(), or with `parts` (from shared()) an already sealed one. */
  constructor(
    readonly rows: number,
    parts?: Utf8ColumnParts,
  ) {
    if (parts) {
      if (parts.nulls.length !== rows || parts.offsets.length !== rows + 1)
        throw new Error(`Utf8Column: parts of ${parts.nulls.length} rows, ${rows} expected`);
      this.offsets = parts.offsets;
      this.nulls = parts.nulls;
      this.bytes = Buffer.from(parts.bytes.buffer, parts.bytes.byteOffset, parts.bytes.byteLength);
      this.size = parts.bytes.byteLength;
      this.next = rows;
      return;
    }
    this.offsets = new Uint32Array(rows + 1);
    this.nulls = new Uint8Array(rows).fill(1);
  }

  /** Rows are set in increasing order; unset rows are null. */
  set(row: number, value: string | null | undefined): void {
    if (row < this.next) throw new Error(`Utf8Column: row ${row} set out of order`);
    for (; this.next < row; this.next++) this.offsets[this.next + 1] = this.size;
    this.next = row + 1;
    if (value !== null && value !== undefined) {
      // A million rows as a million small Buffers cost far more than their text until seal().
      const length = Buffer.byteLength(value, 'utf8');
      if (!this.block || this.blockUsed + length > this.block.length) {
        if (this.block) this.blocks.push(this.block.subarray(0, this.blockUsed));
        this.block = Buffer.allocUnsafe(Math.max(BLOCK, length));
        this.blockUsed = 0;
      }
      this.blockUsed += this.block.write(value, this.blockUsed, 'utf8');
      this.size += length;
      this.nulls[row] = 0;
    }
    if (this.size > 0xffffffff) throw new Error('Utf8Column: more than 4 GiB of text');
    this.offsets[row + 1] = this.size;
  }

  /** After the last set(); with `shared`, the text goes straight into a SharedArrayBuffer (see shared()). */
  seal(shared = false): void {
    for (; this.next < this.rows; this.next++) this.offsets[this.next + 1] = this.size;
    if (this.block) this.blocks.push(this.block.subarray(0, this.blockUsed));
    if (shared) {
      const sab = Buffer.from(new SharedArrayBuffer(this.size));
      let at = 0;
      for (const b of this.blocks) at += b.copy(sab, at);
      this.bytes = sab;
    } else this.bytes = Buffer.concat(this.blocks, this.size);
    this.blocks = [];
    this.block = null;
  }

  /** The sealed column's memory as it is (no copy). */
  parts(): Utf8ColumnParts {
    return {
      bytes: new Uint8Array(this.bytes!.buffer, this.bytes!.byteOffset, this.bytes!.byteLength),
      offsets: this.offsets,
      nulls: this.nulls,
    };
  }

  /** The sealed column in SharedArrayBuffers (worker threads read it without a copy); parts already shared are not copied. */
  shared(): Utf8ColumnParts {
    return {
      bytes: toShared(new Uint8Array(this.bytes!.buffer, this.bytes!.byteOffset, this.bytes!.byteLength)),
      offsets: toShared(this.offsets),
      nulls: toShared(this.nulls),
    };
  }

  get(row: number): string | null {
    if (this.nulls[row]) return null;
    return this.bytes!.toString('utf8', this.offsets[row]!, this.offsets[row + 1]!);
  }

  get byteLength(): number {
    return this.size;
  }
}
