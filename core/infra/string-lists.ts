// Lists of strings for a million rows without a million small arrays: ids into one dictionary,
// packed in a typed array, the enrichment store's and the patterns stage's compact columns.
import { toShared } from './shared-array.ts';

/** A sealed StringLists' memory, as another thread adopts it (the constructor's `parts`). */
export interface StringListsParts {
  rows: number;
  dict: string[];
  offsets: Uint32Array;
  packed: Uint32Array;
}

/** Lists of strings for every row: row i's are dict[ids[offsets[i] .. offsets[i+1])]. */
export class StringLists {
  readonly dict: string[] = [];
  private readonly index = new Map<string, number>();
  private ids: number[] = [];
  offsets: Uint32Array;
  private packed: Uint32Array | null = null;
  /** Rows below this one are set (an unset row has an empty list). */
  private next = 0;
  /** Lists to fill with set() then seal(), or with `parts` (another thread's share()) already sealed ones. */
  constructor(
    private readonly rows: number,
    parts?: StringListsParts,
  ) {
    if (!parts) {
      this.offsets = new Uint32Array(rows + 1);
      return;
    }
    if (parts.rows !== rows || parts.offsets.length !== rows + 1)
      throw new Error(`StringLists: parts of ${parts.rows} rows, ${rows} expected`);
    this.offsets = parts.offsets;
    this.packed = parts.packed;
    this.next = rows;
    for (const v of parts.dict) this.index.set(v, this.dict.push(v) - 1);
  }

  /** Rows are set in increasing order. */
  set(row: number, values: readonly string[] | null): void {
    if (row < this.next) throw new Error(`StringLists: row ${row} set out of order`);
    for (; this.next < row; this.next++) this.offsets[this.next + 1] = this.ids.length;
    this.next = row + 1;
    for (const v of values ?? []) {
      let id = this.index.get(v);
      if (id === undefined) (this.index.set(v, (id = this.dict.length)), this.dict.push(v));
      this.ids.push(id);
    }
    this.offsets[row + 1] = this.ids.length;
  }

  /** After the last set(). */
  seal(): void {
    for (; this.next < this.rows; this.next++) this.offsets[this.next + 1] = this.ids.length;
    this.packed = Uint32Array.from(this.ids);
    this.ids = [];
  }

  /**
   * The sealed lists with their arrays moved into SharedArrayBuffers (this object then reads
   * them too), for worker threads to adopt without a copy of the ids.
   */
  share(): StringListsParts {
    if (!this.packed) throw new Error('StringLists: share() before seal()');
    this.packed = toShared(this.packed);
    this.offsets = toShared(this.offsets);
    return { rows: this.rows, dict: this.dict, offsets: this.offsets, packed: this.packed };
  }

  /** The row's dictionary ids (a view; dict[id] is the string). */
  idsOf(row: number): Uint32Array {
    return this.packed!.subarray(this.offsets[row]!, this.offsets[row + 1]!);
  }

  get(row: number): string[] {
    const out: string[] = [];
    for (let i = this.offsets[row]!; i < this.offsets[row + 1]!; i++) out.push(this.dict[this.packed![i]!]!);
    return out;
  }
}
