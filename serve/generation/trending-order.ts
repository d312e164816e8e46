// The orders of the map lists (GET /narratives/trending, GET /themes; docs/api.md, "Free reads"):
// burst, then momentum, then emergence, then size, then id; another sort key put first, ties in
// that order. Trending then spreads a page over themes (themeRounds).

/** The sort keys of the map lists (the `sort` query parameter of serve/maps/map-queries.ts); the first is the default. */
export const TRENDING_SORT_KEYS = ['burst', 'momentum', 'emerging', 'volume', 'engagement'] as const;
type TrendingSort = (typeof TRENDING_SORT_KEYS)[number];

interface TrendingKeys {
  burst_score: number;
  momentum_score: number;
  emerging_score: number;
  content_count: number;
  id: string;
}

/** Momentum, then emergence, then size, then id: every order's tie-breakers. */
function momentumOrder(a: TrendingKeys, b: TrendingKeys): number {
  return (
    b.momentum_score - a.momentum_score ||
    b.emerging_score - a.emerging_score ||
    b.content_count - a.content_count ||
    a.id.localeCompare(b.id)
  );
}

/**
 * The default trending order: burst_score (what happened: volume above what the narrative's own
 * history predicts; docs/fields.md), then the momentum order. Momentum alone, a ratio of rates with
 * no volume, put a 22-post narrative of everyday words going from 1 to 3 posts a day above a
 * 931-post story that broke 11 days ago (issue 45).
 */
export function trendingOrder(a: TrendingKeys, b: TrendingKeys): number {
  return b.burst_score - a.burst_score || momentumOrder(a, b);
}

type SortKeys = TrendingKeys & { total_engagement: string };

/** The lists' orders: each key first, then trendingOrder. */
const TRENDING_SORTS: Record<TrendingSort, (a: SortKeys, b: SortKeys) => number> = {
  burst: trendingOrder,
  momentum: (a, b) => momentumOrder(a, b) || trendingOrder(a, b),
  emerging: (a, b) => b.emerging_score - a.emerging_score || trendingOrder(a, b),
  volume: (a, b) => b.content_count - a.content_count || trendingOrder(a, b),
  // total_engagement is a string of digits (it can pass 2^53): compared by length, then as text.
  engagement: (a, b) =>
    b.total_engagement.length - a.total_engagement.length ||
    (a.total_engagement < b.total_engagement ? 1 : a.total_engagement > b.total_engagement ? -1 : 0) ||
    trendingOrder(a, b),
};

/**
 * One event, one place on the page: a sorted list reordered in rounds, each theme's first item
 * (in the list's order) before any theme's second, every second before any third, and so on; within
 * a round the list's order. An item with no theme (null) is a theme of its own. Stable and
 * deterministic: the list's order decides every tie.
 */
function themeRounds<T>(sorted: T[], themeOf: (x: T) => string | null): T[] {
  const seen = new Map<string, number>();
  const round = sorted.map((x, i) => {
    const t = themeOf(x);
    if (t === null) return 0;
    const k = seen.get(t) ?? 0;
    seen.set(t, k + 1);
    return k;
  });
  return sorted
    .map((x, i) => ({ x, i, r: round[i]! }))
    .sort((a, b) => a.r - b.r || a.i - b.i)
    .map((e) => e.x);
}

interface PageOptions<T> {
  sort: TrendingSort;
  offset: number;
  limit: number;
  /** When given, the sorted list is spread over themes (themeRounds) before it is paged. */
  themeOf?: (x: T) => string | null;
}

/** One page of a list sorted by `sort`, in the narrative reads' paging (docs/api.md, "Paging"). */
export function sortedPage<T>(list: T[], keys: (x: T) => SortKeys, o: PageOptions<T>) {
  const sorted = list.sort((a, b) => TRENDING_SORTS[o.sort](keys(a), keys(b)));
  const ordered = o.themeOf ? themeRounds(sorted, o.themeOf) : sorted;
  return {
    page: ordered.slice(o.offset, o.offset + o.limit),
    total: ordered.length,
    offset: o.offset,
    limit: o.limit,
    next_offset: o.offset + o.limit < ordered.length ? o.offset + o.limit : null,
  };
}
