// The orders of the map lists (GET /narratives/trending, GET /themes; docs/api.md, "Free reads"):
// momentum, then emergence, then size, then id; another sort key put first, ties in that order.

/** The sort keys of the map lists (the `sort` query parameter of serve/maps/map-queries.ts). */
export const TRENDING_SORT_KEYS = ['momentum', 'emerging', 'volume', 'engagement'] as const;
type TrendingSort = (typeof TRENDING_SORT_KEYS)[number];

interface TrendingKeys {
  momentum_score: number;
  emerging_score: number;
  content_count: number;
  id: string;
}

/** Trending order: momentum, then emergence, then size, then id. */
export function trendingOrder(a: TrendingKeys, b: TrendingKeys): number {
  return (
    b.momentum_score - a.momentum_score ||
    b.emerging_score - a.emerging_score ||
    b.content_count - a.content_count ||
    a.id.localeCompare(b.id)
  );
}

type SortKeys = TrendingKeys & { total_engagement: string };

/** The lists' other orders: each key first, then trendingOrder. */
const TRENDING_SORTS: Record<TrendingSort, (a: SortKeys, b: SortKeys) => number> = {
  momentum: trendingOrder,
  emerging: (a, b) => b.emerging_score - a.emerging_score || trendingOrder(a, b),
  volume: (a, b) => b.content_count - a.content_count || trendingOrder(a, b),
  // total_engagement is a string of digits (it can pass 2^53): compared by length, then as text.
  engagement: (a, b) =>
    b.total_engagement.length - a.total_engagement.length ||
    (a.total_engagement < b.total_engagement ? 1 : a.total_engagement > b.total_engagement ? -1 : 0) ||
    trendingOrder(a, b),
};

/** One page of a list sorted by `sort`, in the narrative reads' paging (docs/api.md, "Paging"). */
export function sortedPage<T>(list: T[], keys: (x: T) => SortKeys, sort: TrendingSort, offset: number, limit: number) {
  const ordered = list.sort((a, b) => TRENDING_SORTS[sort](keys(a), keys(b)));
  return {
    page: ordered.slice(offset, offset + limit),
    total: ordered.length,
    offset,
    limit,
    next_offset: offset + limit < ordered.length ? offset + limit : null,
  };
}
