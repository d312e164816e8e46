// A nullable string per row for a million rows in one UTF-8 buffer plus offsets, decoded only for
// the rows a response returns: titles and descriptions held as JS strings would take twice the
// memory and millions of heap objects for the collector to walk.
export class Utf8Column {
  private parts: Buffer[] = [];
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
      const b = Buffer.from(value, 'utf8');
      this.parts.push(b);
      this.size += b.length;
      this.nulls[row] = 0;
    }
    if (this.size > 0xffffffff) throw new Error('Utf8Column: more than 4 GiB of text');
    this.offsets[row + 1] = this.size;
  }

  /** After the last set(). */
  seal(): void {
    for (; this.next < this.rows; this.next++) this.offsets[this.next + 1] = this.size;
    this.bytes = Buffer.concat(this.parts, this.size);
    this.parts = [];
  }

  get(row: number): string | null {
    if (this.nulls[row]) return null;
    return this.bytes!.toString('utf8', this.offsets[row]!, this.offsets[row + 1]!);
  }

  get byteLength(): number {
    return this.size;
  }
}
