// A post's row from its uuid, for the media route: a client knows posts by uuid, the generation by
// row. Rows are ordered by (published_at, uuid), so a uuid alone needs its own index: the 32-bit
// FNV-1a hash of each live row's uuid packed above the row number and sorted (8 bytes a row, 8 MB
// at 1M posts), built on the first look-up of a generation and dropped with it. A hash match is
// confirmed against the uuid itself, so collisions cost a comparison, never a wrong row.
import type { SearchIndex } from '../../core/ranking/search-index.ts';

const byIndex = new WeakMap<SearchIndex, BigUint64Array>();

function fnv1a(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

function build(index: SearchIndex): BigUint64Array {
  const packed = new BigUint64Array(index.rows);
  let n = 0;
  for (let r = 0; r < index.rows; r++) {
    if (index.deleted[r]) continue;
    packed[n++] = (BigInt(fnv1a(index.uuid.get(r)!)) << 32n) | BigInt(r);
  }
  return packed.subarray(0, n).sort();
}

/** The live row of `uuid` in this generation, or null. */
export function rowOfUuid(index: SearchIndex, uuid: string): number | null {
  let packed = byIndex.get(index);
  if (!packed) byIndex.set(index, (packed = build(index)));
  const h = BigInt(fnv1a(uuid));
  // The first entry whose hash is >= h.
  let lo = 0;
  let hi = packed.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (packed[mid]! >> 32n < h) lo = mid + 1;
    else hi = mid;
  }
  for (let i = lo; i < packed.length && packed[i]! >> 32n === h; i++) {
    const row = Number(packed[i]! & 0xffffffffn);
    if (index.uuid.get(row) === uuid) return row;
  }
  return null;
}
