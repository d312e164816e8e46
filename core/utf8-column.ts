// A nullable string per row for a million rows in one UTF-8 buffer plus offsets, decoded only for
// the rows a response returns: titles and descriptions held as JS strings would take twice the
// memory and millions of heap objects for the collector to walk.
/** Text is written into blocks of this size (one per long value), not one Buffer per row. */
const BLOCK = 1 << 20;

export class Utf8Column {
  private parts: Buffer[] = [];
  private block: Buffer | null = null;
  private blockUsed = 0;
  private size = 0;
  private bytes: Buffer | null = null;
  /** Row i is bytes[offsets[i] .. offsets[i+1]); a null is marked in `nulls`. */
  readonly offsets: Uint32Array;
  readonly nulls: Uint8Array;
  private next = 0;

  constructor(readonly rows: number) {
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
        if (this.block) this.parts.push(this.block.subarray(0, this.blockUsed));
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

  /** After the last set(). */
  seal(): void {
    for (; this.next < this.rows; this.next++) this.offsets[this.next + 1] = this.size;
    if (this.block) this.parts.push(this.block.subarray(0, this.blockUsed));
    this.bytes = Buffer.concat(this.parts, this.size);
    this.parts = [];
    this.block = null;
  }

  get(row: number): string | null {
    if (this.nulls[row]) return null;
    return this.bytes!.toString('utf8', this.offsets[row]!, this.offsets[row + 1]!);
  }

  get byteLength(): number {
    return this.size;
  }
}
