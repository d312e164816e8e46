// What a cluster's figures read of its members (a narrative's or a pattern's, in the pipeline or
// in a search answer): creators, platforms and engagement of a set of rows, and its representative.
/** The per-row columns a cluster's figures read (the pipeline's post columns, or the server's). */
export interface MemberColumns { creator: ArrayLike<number>; platform: ArrayLike<number>; engagement: ArrayLike<number> }

/** Creators, platforms (counts) and total engagement of a set of rows. */
export function memberStats(p: MemberColumns, members: readonly number[]): { creators: number; platforms: Map<number, number>; engagement: number } {
  const creators = new Set<number>();
  const platforms = new Map<number, number>();
  let engagement = 0;
  for (const r of members) {
    if (!Number.isNaN(p.creator[r]!)) creators.add(p.creator[r]!);
    platforms.set(p.platform[r]!, (platforms.get(p.platform[r]!) ?? 0) + 1);
    engagement += p.engagement[r]!;
  }
  return { creators: creators.size, platforms, engagement };
}

/** The representative of members ordered most central first: the most engaged of the central tenth. */
export function representativeOf(p: Pick<MemberColumns, 'engagement'>, members: readonly number[]): number {
  const head = members.slice(0, Math.max(1, Math.ceil(members.length / 10)));
  return head.reduce((a, b) => (p.engagement[b]! > p.engagement[a]! ? b : a), head[0]!);
}
