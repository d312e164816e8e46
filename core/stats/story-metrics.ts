// How well clusters of posts (a window's narratives, themes or a peer's clusters) tell real stories
// apart, against labelled posts (issue 38; the real-data bench, bench/suites/quality-real.ts):
//   best F1 of each crisis: the cluster whose members best match the crisis's on-topic posts,
//     F1 = 2 |cluster ∩ crisis| / (|cluster| + |crisis|);
//   purity: over the clustered posts, the share carrying their cluster's majority label (off-topic
//     a label of its own); story purity the same with crisis x story (T26's information type);
//   off-topic inside: the share of the off-topic posts that some cluster holds;
//   catch-alls: clusters of more than max(200, 5% of the window's posts) that are mostly off-topic
//     or whose on-topic members are under 70% from one crisis.

/** A post's truth: its crisis (null: off-topic, everyday talk) and, where known, the story it tells. */
export interface PostTruth {
  crisis: string | null;
  story?: string | null;
}

export const OFF_TOPIC = 'off-topic';

/** The catch-all bar of issue 38. */
const CATCH_ALL = { minPosts: 200, windowShare: 0.05, oneCrisisShare: 0.7 } as const;

/** F1 of a cluster against a true set, from their sizes and overlap (0 when both are empty). */
export function f1(overlap: number, clusterSize: number, truthSize: number): number {
  return clusterSize + truthSize === 0 ? 0 : (2 * overlap) / (clusterSize + truthSize);
}

function counts<T>(xs: Iterable<T>): Map<T, number> {
  const m = new Map<T, number>();
  for (const x of xs) m.set(x, (m.get(x) ?? 0) + 1);
  return m;
}

/**
 * Each crisis's best F1 over the clusters, a cluster given as its members' crises (null:
 * off-topic); `truth` holds each crisis's on-topic post count. A crisis no cluster touches scores 0.
 */
export function bestF1(clusters: ReadonlyArray<ReadonlyArray<string | null>>, truth: ReadonlyMap<string, number>): Map<string, number> {
  const best = new Map<string, number>([...truth.keys()].map((c) => [c, 0]));
  for (const members of clusters) {
    for (const [crisis, overlap] of counts(members)) {
      if (crisis === null || !truth.has(crisis)) continue;
      best.set(crisis, Math.max(best.get(crisis)!, f1(overlap, members.length, truth.get(crisis)!)));
    }
  }
  return best;
}

/** Share of clustered posts that carry their cluster's majority label; NaN when no post is clustered. */
export function purity(clusters: ReadonlyArray<ReadonlyArray<string>>): number {
  let majority = 0;
  let total = 0;
  for (const members of clusters) {
    if (members.length === 0) continue;
    majority += Math.max(...counts(members).values());
    total += members.length;
  }
  return total === 0 ? NaN : majority / total;
}

/** More than half of the members off-topic. */
export function mostlyOffTopic(crises: ReadonlyArray<string | null>): boolean {
  return crises.filter((c) => c === null).length * 2 > crises.length;
}

/**
 * Why a cluster is a catch-all, or null: more than max(200, 5% of the window's posts) members and
 * either mostly off-topic or its on-topic members under 70% from one crisis ('mixed').
 */
export function catchAllReason(crises: ReadonlyArray<string | null>, windowPosts: number): 'off-topic' | 'mixed' | null {
  if (crises.length <= Math.max(CATCH_ALL.minPosts, CATCH_ALL.windowShare * windowPosts)) return null;
  if (mostlyOffTopic(crises)) return 'off-topic';
  const on = crises.filter((c): c is string => c !== null);
  const top = Math.max(0, ...counts(on).values());
  return top < CATCH_ALL.oneCrisisShare * on.length ? 'mixed' : null;
}

interface CatchAll {
  id: string;
  size: number;
  reason: 'off-topic' | 'mixed';
  offTopicShare: number;
}

export interface StoryScore {
  clusters: number;
  /** Each crisis with on-topic posts among `posts`: its best F1. */
  bestF1: Record<string, number>;
  /** Mean of bestF1 over those crises (NaN with none). */
  meanBestF1: number;
  /** Purity against the crisis, off-topic a label of its own. */
  purity: number;
  /** Purity against crisis x story; null when no post has a story. */
  storyPurity: number | null;
  /** Share of the off-topic posts inside some cluster (NaN with none). */
  offTopicInside: number;
  /** Share of all posts outside every cluster. */
  noiseShare: number;
  catchAlls: CatchAll[];
}

/**
 * A clustering (cluster id -> member uuids; a post in at most one cluster) of `posts` (every post
 * of the window, with its truth) scored as above. A member missing from `posts` is an error: the
 * caller's window and the clustering's disagree.
 */
export function scoreStories(posts: ReadonlyMap<string, PostTruth>, clusters: ReadonlyMap<string, readonly string[]>): StoryScore {
  const truth = counts([...posts.values()].flatMap((p) => (p.crisis === null ? [] : [p.crisis])));
  const hasStories = [...posts.values()].some((p) => p.crisis !== null && p.story != null);
  const offTopic = [...posts.values()].filter((p) => p.crisis === null).length;
  const crises: Array<Array<string | null>> = [];
  const stories: string[][] = [];
  const catchAlls: CatchAll[] = [];
  let inside = 0;
  let offInside = 0;
  for (const [id, members] of clusters) {
    const ts = members.map((u) => {
      const t = posts.get(u);
      if (!t) throw new Error(`cluster ${id}: member ${u} is not among the window's posts`);
      return t;
    });
    const cs = ts.map((t) => t.crisis);
    crises.push(cs);
    stories.push(ts.map((t) => (t.crisis === null ? OFF_TOPIC : `${t.crisis}/${t.story ?? '?'}`)));
    inside += members.length;
    const off = cs.filter((c) => c === null).length;
    offInside += off;
    const reason = catchAllReason(cs, posts.size);
    if (reason) catchAlls.push({ id, size: members.length, reason, offTopicShare: off / members.length });
  }
  const best = bestF1(crises, truth);
  const bestValues = [...best.values()];
  return {
    clusters: clusters.size,
    bestF1: Object.fromEntries([...best].sort((a, b) => (a[0] < b[0] ? -1 : 1))),
    meanBestF1: bestValues.length ? bestValues.reduce((a, b) => a + b, 0) / bestValues.length : NaN,
    purity: purity(crises.map((cs) => cs.map((c) => c ?? OFF_TOPIC))),
    storyPurity: hasStories ? purity(stories) : null,
    offTopicInside: offTopic ? offInside / offTopic : NaN,
    noiseShare: posts.size ? (posts.size - inside) / posts.size : 0,
    catchAlls: catchAlls.sort((a, b) => b.size - a.size),
  };
}
