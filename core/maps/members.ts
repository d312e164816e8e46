// What a cluster's figures read of its members (a narrative's or a pattern's, in the pipeline or
// in a search answer): creators, platforms and engagement of a set of rows, and its representative.
/** The per-row columns a cluster's figures read (the pipeline's post columns, or the server's). */
/** A post's interactions are likes + comments + shares, the plain sum (the ranking's engagement is weighted). */
export interface MemberColumns {
  creator: ArrayLike<number>;
  platform: ArrayLike<number>;
  interactions: ArrayLike<number>;
}

/** Creators, platforms (counts) and total interactions of a set of rows (a narrative's total_engagement). */
export function memberStats(
  p: MemberColumns,
  members: readonly number[],
): { creators: number; platforms: Map<number, number>; interactions: number } {
  const creators = new Set<number>();
  const platforms = new Map<number, number>();
  let interactions = 0;
  for (const r of members) {
    if (!Number.isNaN(p.creator[r]!)) creators.add(p.creator[r]!);
    platforms.set(p.platform[r]!, (platforms.get(p.platform[r]!) ?? 0) + 1);
    interactions += p.interactions[r]!;
  }
  return { creators: creators.size, platforms, interactions };
}

/** The representative of members ordered most central first: of the central tenth, the one with the most interactions. */
export function representativeOf(p: Pick<MemberColumns, 'interactions'>, members: readonly number[]): number {
  const head = members.slice(0, Math.max(1, Math.ceil(members.length / 10)));
  return head.reduce((a, b) => (p.interactions[b]! > p.interactions[a]! ? b : a), head[0]!);
}

const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);
const LOW = 2 ** 21;

/**
 * Member positions (`idx`, each < 2^21) ordered most central first: by `similarity[i]` descending,
 * ties by position ascending. Each is packed with its similarity into one float64 (the float32's
 * bits made order-preserving, times 2^21, plus the position: 53 bits, exact) and the packs sorted
 * natively: a comparator sort of a million members cost seconds.
 */
export function mostCentralFirst(idx: ArrayLike<number>, similarity: ArrayLike<number>): Int32Array {
  const keys = new Float64Array(idx.length);
  for (let k = 0; k < idx.length; k++) {
    const i = idx[k]!;
    if (i >= LOW) throw new Error(`member position ${i} is past ${LOW - 1}`);
    f32[0] = similarity[i]! + 0; // -0 as +0: equal similarities tie
    const b = u32[0]!;
    // Order-preserving bits of the similarity (negatives flipped), inverted for descending order.
    const ordered = b & 0x80000000 ? ~b >>> 0 : (b | 0x80000000) >>> 0;
    keys[k] = (0xffffffff - ordered) * LOW + i;
  }
  keys.sort();
  const out = new Int32Array(idx.length);
  for (let k = 0; k < keys.length; k++) out[k] = keys[k]! % LOW;
  return out;
}
