// What a client of the API sees of one generation's map lists (the real-data bench,
// bench/suites/quality-real.ts; issue 45), read through a running server's free reads, per window:
//   the first page of GET /narratives/trending and of GET /themes in the server's default order (no
//   sort parameter: whatever the server ranks first is what is measured), each item's posts
//   (GET /narratives/{id}; a theme's: its narratives') against the posts' truth, and where each
//   crisis's first item ranks;
//   every narrative's lifecycle beside its daily counts (GET /narratives/trending?daily=true, all pages).
import { OFF_TOPIC, type PostTruth } from '../../core/stats/story-metrics.ts';
import { WINDOW_KEYS } from '../../core/snapshots/windows.ts';

interface Api {
  baseUrl: string;
  key: string;
}

/** A crisis needs this many on-topic posts in a window to be looked for on the window's first pages. */
export const MIN_CRISIS_POSTS = 100;

export interface ListItem {
  /** 1-based, on the first page. */
  rank: number;
  label: string;
  posts: number;
  momentum: number;
  /** The crisis most of its posts belong to, or off-topic, and that share. */
  majority: string;
  share: number;
  /** More than half of its posts off-topic (no crisis's on-topic tweets). */
  mostlyOffTopic: boolean;
  /** The crisis more than half of its posts are the on-topic tweets of, or null. */
  mostlyCrisis: string | null;
  /** A narrative's theme label (null: none, or a theme). */
  theme: string | null;
}

interface ListFigures {
  /** The page size the server answered with, and the list's length. */
  limit: number;
  total: number;
  items: ListItem[];
  /** Each crisis with MIN_CRISIS_POSTS on-topic posts in the window: the rank of its first item on the page, null when none is. */
  firstRank: Record<string, number | null>;
  /** The rank of the last found crisis's first item (null: none found), and the mostly off-topic items ranked above it. */
  lastFound: number | null;
  offTopicAbove: number;
}

interface Fading {
  label: string;
  lifecycle: string;
  peak: number;
  last3: number;
  posts: number;
}

interface LifecycleFigures {
  /** Narratives by lifecycle ('none': no lifecycle). */
  counts: Record<string, number>;
  /** Emerging or growing narratives whose last 3 days average under a quarter of their peak day. */
  fading: Fading[];
}

export interface ServedWindow {
  window: string;
  trending: ListFigures;
  themes: ListFigures;
  lifecycle: LifecycleFigures;
}

interface Page<T> {
  generation: string;
  items: T[];
  limit: number;
  total: number;
  next_offset: number | null;
}

interface NarrativeItem {
  id: string;
  label: string;
  content_count: number;
  momentum_score: number;
  lifecycle: string | null;
  theme_id?: string | null;
  daily_counts?: number[];
}

type ThemeItem = Omit<NarrativeItem, 'lifecycle' | 'theme_id'> & { narratives: Array<{ id: string }> };

/** GETs of one generation: an answer from another one (a publish meanwhile) is an error. */
function reader(api: Api, generation: string) {
  return async <T extends { generation: string }>(pathAndQuery: string): Promise<T> => {
    const r = await fetch(`${api.baseUrl}${pathAndQuery}`, { headers: { 'x-api-key': api.key } });
    if (!r.ok) throw new Error(`GET ${pathAndQuery}: ${r.status} ${await r.text()}`);
    const body = (await r.json()) as T;
    if (body.generation !== generation) throw new Error(`GET ${pathAndQuery} answered from ${body.generation}, not ${generation}`);
    return body;
  };
}

type Get = ReturnType<typeof reader>;

/** Every item of a paged list, `limit` at a time. */
async function allPages<T>(get: Get, pathAndQuery: string): Promise<T[]> {
  const out: T[] = [];
  for (let offset: number | null = 0; offset !== null;) {
    const page: Page<T> = await get(`${pathAndQuery}&limit=100&offset=${offset}`);
    out.push(...page.items);
    offset = page.next_offset;
  }
  return out;
}

/** Where most of the posts come from, and whether more than half are one crisis's on-topic tweets or off-topic. */
function composition(uuids: readonly string[], truth: ReadonlyMap<string, PostTruth>) {
  const counts = new Map<string, number>();
  for (const u of uuids) {
    const t = truth.get(u);
    if (!t) throw new Error(`post ${u} has no truth`);
    counts.set(t.crisis ?? OFF_TOPIC, (counts.get(t.crisis ?? OFF_TOPIC) ?? 0) + 1);
  }
  const [majority, n] = [...counts].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))[0] ?? [OFF_TOPIC, 0];
  const share = uuids.length ? n / uuids.length : 0;
  const most = share > 0.5;
  return {
    majority,
    share,
    mostlyOffTopic: most && majority === OFF_TOPIC,
    mostlyCrisis: most && majority !== OFF_TOPIC ? majority : null,
  };
}

/** Where each crisis's first item ranks on the page, and the mostly off-topic items above the last one found. */
function ranks(
  items: readonly ListItem[],
  onTopicBy: Record<string, number>,
  minPosts: number,
): Pick<ListFigures, 'firstRank' | 'lastFound' | 'offTopicAbove'> {
  const firstRank: Record<string, number | null> = {};
  for (const [c, n] of Object.entries(onTopicBy).sort((a, b) => (a[0] < b[0] ? -1 : 1)))
    if (n >= minPosts) firstRank[c] = items.find((i) => i.mostlyCrisis === c)?.rank ?? null;
  const found = Object.values(firstRank).filter((x): x is number => x !== null);
  const lastFound = found.length ? Math.max(...found) : null;
  return {
    firstRank,
    lastFound,
    offTopicAbove: lastFound === null ? 0 : items.filter((i) => i.rank < lastFound && i.mostlyOffTopic).length,
  };
}

function lifecycleCensus(narratives: readonly NarrativeItem[]): LifecycleFigures {
  const counts: Record<string, number> = {};
  const fading: Fading[] = [];
  for (const n of narratives) {
    const lifecycle = n.lifecycle ?? 'none';
    counts[lifecycle] = (counts[lifecycle] ?? 0) + 1;
    const days = n.daily_counts ?? [];
    const last = days.slice(-3);
    const peak = Math.max(0, ...days);
    const last3 = last.length ? last.reduce((a, b) => a + b, 0) / last.length : 0;
    if ((lifecycle === 'emerging' || lifecycle === 'growing') && last3 < peak / 4)
      fading.push({ label: n.label, lifecycle, peak, last3, posts: n.content_count });
  }
  return { counts, fading };
}

/**
 * The map lists of the generation `generation` a server at `api` serves, per window; `onTopicBy`:
 * each window's on-topic posts by crisis; a crisis is looked for where it has `minPosts` of them.
 */
export async function servedLists(
  api: Api,
  generation: string,
  truth: ReadonlyMap<string, PostTruth>,
  onTopicBy: ReadonlyMap<string, Record<string, number>>,
  minPosts = MIN_CRISIS_POSTS,
): Promise<ServedWindow[]> {
  const get = reader(api, generation);
  const members = new Map<string, string[]>();
  const membersOf = async (id: string): Promise<string[]> => {
    let m = members.get(id);
    if (m) return m;
    m = [];
    for (let offset: number | null = 0; offset !== null;) {
      const d: { generation: string; posts: Page<{ uuid: string }> } = await get(
        `/narratives/${encodeURIComponent(id)}?limit=500&offset=${offset}`,
      );
      m.push(...d.posts.items.map((p) => p.uuid));
      offset = d.posts.next_offset;
    }
    members.set(id, m);
    return m;
  };
  const out: ServedWindow[] = [];
  for (const window of WINDOW_KEYS) {
    const themeLabel = new Map((await allPages<ThemeItem>(get, `/themes?window=${window}`)).map((t) => [t.id, t.label]));
    const item = (x: NarrativeItem | ThemeItem, i: number, uuids: string[], theme: string | null): ListItem => ({
      rank: i + 1,
      label: x.label,
      posts: x.content_count,
      momentum: x.momentum_score,
      ...composition(uuids, truth),
      theme,
    });
    // The first pages as a client asks for them: the window alone, the server's default order and page size.
    const trending: Page<NarrativeItem> = await get(`/narratives/trending?window=${window}`);
    const themes: Page<ThemeItem> = await get(`/themes?window=${window}`);
    const trendingItems: ListItem[] = [];
    for (const [i, n] of trending.items.entries())
      trendingItems.push(item(n, i, await membersOf(n.id), n.theme_id ? (themeLabel.get(n.theme_id) ?? n.theme_id) : null));
    const themeItems: ListItem[] = [];
    for (const [i, t] of themes.items.entries()) {
      const uuids: string[] = [];
      for (const n of t.narratives) uuids.push(...(await membersOf(n.id)));
      themeItems.push(item(t, i, uuids, null));
    }
    const on = onTopicBy.get(window) ?? {};
    const list = (p: Page<unknown>, items: ListItem[]): ListFigures => ({
      limit: p.limit,
      total: p.total,
      items,
      ...ranks(items, on, minPosts),
    });
    out.push({
      window,
      trending: list(trending, trendingItems),
      themes: list(themes, themeItems),
      lifecycle: lifecycleCensus(await allPages<NarrativeItem>(get, `/narratives/trending?window=${window}&daily=true`)),
    });
  }
  return out;
}
