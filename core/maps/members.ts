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
