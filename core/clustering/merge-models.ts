// The maps' clustering on an incremental run, after BERTopic's merge_models: the served generation's
// clusters are kept, and only the posts new to this run are placed.
//   1. each previous cluster keeps its members still in the window (a post that left the window, or
//      was deleted, leaves its cluster); its centre is their unit mean (from the sum of its members'
//      vectors when the caller has it: minus the few that left, instead of a pass over all of them);
//   1b. new stories: the new posts are clustered beside a panel of the kept clusters' members,
//      from their centres plus one fresh centre at a time; a fresh cluster of new posts unlike
//      every kept centre is a new story, and its posts skip step 2 (newStories);
//   2. a new post joins the cluster whose centre is nearest by cosine when at least
//      noiseSimilarity close (the full clustering's noise rule);
//   3. the new posts left over are clustered among themselves (clusterWindow, the full run's
//      k-means by silhouette): a topic the previous clusters do not know becomes a new cluster;
//      since at most (posts left / the admission size) clusters can pass step 4, the k search
//      stops there, and is skipped when fewer posts are left than one cluster needs;
//   4. every cluster, kept or new, must hold max(minClusterSize, minClusterShare x the window's
//      posts) members (the full run's admission rule), or it dissolves into noise;
//   5. centres are recomputed as the unit mean of the final members, and each member's similarity
//      is its cosine to its centre.
// Posts that were noise stay noise until a full run clusters the window anew. The cost follows the
// new posts and the members (a cosine each), not the window: no k search, no scan of every post
// against every centre (step 1b sees at most STORY_SAMPLE new posts and STORY_PANEL per cluster).
import { dot } from '../vectors/dot.ts';
import { clusterWindow, type ClusteredRange, type ClusterOptions, type Clustering } from './kmeans-by-silhouette.ts';
import { lloydKMeans } from '../stats/lloyd-kmeans.ts';
import { seedCentres } from '../stats/kmeans-plus-plus.ts';
import { clusterStories, type StoryOptions } from './stories.ts';
import { burstStories } from './word-bursts.ts';
import { StoryLexicon, type StoryWords } from './story-lexicon.ts';
import { MATCH_COSINE } from './tracking.ts';

export interface MergedRange extends ClusteredRange {
  /** Per cluster id: the previous cluster it continues (an index into `previous`), or null for a new one. */
  origin: Array<number | null>;
  /** New posts placed: joined a previous cluster, formed new clusters, left as noise. */
  placed: { joined: number; founded: number; noise: number };
}

/** Sum of the rows' vectors. */
export function vectorSum(
  vectors: Float32Array,
  dim: number,
  rows: ArrayLike<number>,
  into: Float64Array = new Float64Array(dim),
  sign = 1,
): Float64Array {
  for (let k = 0; k < rows.length; k++) {
    const o = rows[k]! * dim;
    for (let i = 0; i < dim; i++) into[i]! += sign * vectors[o + i]!;
  }
  return into;
}

/**
 * Each group's sum of its rows' vectors (rows without a vector skipped), for several partitions at
 * once (a map's windows: each a list of groups). The groups of a partition are disjoint (a
 * window's clusters), so every partition is summed in one sequential pass over the rows, all
 * partitions in the same pass: each row's vector is read once, not once per group holding it
 * (memory traffic is the cost at a million rows). Per group the rows are added in ascending order,
 * as vectorSum adds them: the same sums. A partition whose groups overlap is summed group by group.
 */
export function partitionSums(
  vectors: Float32Array,
  dim: number,
  hasVector: Uint8Array,
  partitions: ReadonlyArray<ReadonlyArray<ArrayLike<number>>>,
): Float64Array[][] {
  const n = hasVector.length;
  const out: Float64Array[][] = [];
  const owners: Int32Array[] = [];
  const sums: Float64Array[] = [];
  const active: number[] = [];
  let lo = n;
  let hi = 0;
  partitions.forEach((groups, p) => {
    const owner = new Int32Array(n).fill(-1);
    let disjoint = true;
    groups.forEach((g, k) => {
      for (let j = 0; j < g.length; j++) {
        const r = g[j]!;
        if (r >= n || !hasVector[r]) continue;
        if (owner[r] !== -1) disjoint = false;
        owner[r] = k;
        if (r < lo) lo = r;
        if (r >= hi) hi = r + 1;
      }
    });
    if (!disjoint) {
      out[p] = groups.map((g) =>
        vectorSum(
          vectors,
          dim,
          Array.from(g).filter((r) => r < n && hasVector[r] === 1),
        ),
      );
      return;
    }
    owners[p] = owner;
    sums[p] = new Float64Array(groups.length * dim);
    active.push(p);
  });
  for (let r = lo; r < hi; r++) {
    const v = r * dim;
    for (const p of active) {
      const k = owners[p]![r]!;
      if (k < 0) continue;
      const s = sums[p]!;
      const o = k * dim;
      for (let i = 0; i < dim; i++) s[o + i]! += vectors[v + i]!;
    }
  }
  for (const p of active) out[p] = partitions[p]!.map((_, k) => sums[p]!.subarray(k * dim, (k + 1) * dim));
  return out;
}

/** partitionSums of one partition. */
export function groupSums(
  vectors: Float32Array,
  dim: number,
  hasVector: Uint8Array,
  groups: ReadonlyArray<ArrayLike<number>>,
): Float64Array[] {
  return partitionSums(vectors, dim, hasVector, [groups])[0]!;
}

/** A sum of unit vectors as their unit mean (zeros for a zero sum). */
export function unitOf(sum: Float64Array): Float32Array {
  let n = 0;
  for (let i = 0; i < sum.length; i++) n += sum[i]! * sum[i]!;
  n = Math.sqrt(n) || 1;
  return Float32Array.from(sum, (x) => x / n);
}

/** The rows in ascending order (already so, usually: kept members then the newer posts that joined). */
function ascending(rows: number[]): number[] {
  for (let i = 1; i < rows.length; i++) if (rows[i]! < rows[i - 1]!) return rows.sort((a, b) => a - b);
  return rows;
}

/** A previous cluster: its member rows in this generation, ascending; `sum`: the sum of those with a vector, when known. */
interface PreviousMembers {
  members: ArrayLike<number>;
  sum?: Float64Array | null;
}

/** One window's (or scope's) merge: its start and its previous clusters. */
interface MergeWindow {
  firstRow: number;
  previous: ReadonlyArray<PreviousMembers>;
}

/** A window's clusters after steps 1-4: members ascending, where each came from, and its sum. */
interface Placed {
  rows: number[];
  finals: Array<{ members: number[]; origin: number | null; sum: Float64Array }>;
  placed: { joined: number; founded: number; noise: number };
}

/** Members of each served cluster that stand for it beside the new posts (evenly spaced). */
const STORY_PANEL = 12;
/** New posts the search for new stories sees (evenly spaced); every new post is then placed. */
const STORY_SAMPLE = 2000;
/** A new story is at least this share new posts, among the searched rows of its cluster. */
const STORY_NEW_SHARE = 0.8;
/**
 * Two stories found in one run whose centres are at least this alike are pieces of one story. The
 * planted 30-post story came out in three pieces of 10 (by the sentence that closes each post),
 * 0.48-0.55 alike; centres of different planted narratives of the 20k-post quality corpus are
 * 0.03 alike at the median and 0.27 at the 99th percentile, in the same word space.
 */
const STORY_PIECES_COSINE = 0.4;
/** New stories found per window and run at most. */
const STORY_MAX = 4;

function evenly(xs: readonly number[], m: number): number[] {
  if (xs.length <= m) return [...xs];
  return Array.from({ length: m }, (_, i) => xs[Math.floor(((i + 0.5) * xs.length) / m)]!);
}

/** Members sampled for a served cluster's floor, and the quantile of their cosines it is. */
const FLOOR_SAMPLE = 64;
const FLOOR_QUANTILE = 0.05;

/** The cosine to its centre that all but the least typical FLOOR_QUANTILE of a cluster's members reach (on up to FLOOR_SAMPLE of them). */
function memberFloor(vectors: Float32Array, dim: number, members: readonly number[], centre: Float32Array): number {
  const sample = evenly(members, FLOOR_SAMPLE);
  if (sample.length === 0) return Infinity;
  const sims = Float64Array.from(sample, (r) => dot(vectors, r * dim, centre, 0, dim)).sort();
  return sims[Math.floor(FLOOR_QUANTILE * (sims.length - 1))]!;
}

/** New posts the fresh centre's seeding compares pairwise (quadratic). */
const STORY_SEED_SAMPLE = 500;

/**
 * The fresh centre's start: the densest group of new posts that the served centres (and stories
 * found so far) do not explain. Each new post counts the new posts more alike to it than its own
 * nearest centre is; the post with the most, with them, gives the unit mean. A single post as the
 * seed (k-means++) lost the story's posts to the 30 served centres each was nearer to (the
 * posts of one story vary: two of them are less alike than each is to some older narrative,
 * while each is close to the story's mean). Null when no new post has such company.
 */
function storySeed(points: Float32Array, dim: number, cand: readonly number[], centres: readonly Float32Array[]): Float64Array | null {
  const near = cand.map((i) => Math.max(...centres.map((c) => dot(points, i * dim, c, 0, dim))));
  let best = -1;
  let bestCount = 0;
  cand.forEach((i, a) => {
    let count = 0;
    for (let b = 0; b < cand.length; b++) if (b !== a && dot(points, i * dim, points, cand[b]! * dim, dim) > near[a]!) count++;
    if (count > bestCount) ((bestCount = count), (best = a));
  });
  if (best < 0) return null;
  const sum = new Float64Array(dim);
  const at = cand[best]!;
  vectorSum(points, dim, [at], sum);
  for (let b = 0; b < cand.length; b++)
    if (b !== best && dot(points, at * dim, points, cand[b]! * dim, dim) > near[best]!) vectorSum(points, dim, [cand[b]!], sum);
  return Float64Array.from(unitOf(sum));
}

/** The rows newStories clusters: a panel of the served clusters' members, then the new posts. */
interface StoryRows {
  dim: number;
  /** The rows' vectors, in order, as Float32 and as Lloyd's Float64 input. */
  points: Float32Array;
  data: Float64Array;
  /** Rows before this index are the panel. */
  panel: number;
  /** Positions of the new posts the fresh centre's seeding compares. */
  fresher: number[];
  newCount: number;
  opts: ClusterOptions;
}

/**
 * The fresh centre's cluster beside the `start` centres, from the better of two starts: the densest
 * unexplained group (storySeed) and a k-means++ draw among the new posts; the one whose cluster
 * keeps more new posts (and passes) wins. `sum`: the sum of its new posts' vectors; null when none passes.
 */
function freshCluster(s: StoryRows, start: readonly Float32Array[], round: number): { fresh: number; sum: Float64Array } | null {
  const { points, data, dim, panel, fresher, opts } = s;
  const seeds = [
    storySeed(points, dim, fresher, start),
    Float64Array.from(seedCentres(points, dim, fresher, start.length + 1, opts.seed + round, start).at(-1)!),
  ];
  let pick: { fresh: number; sum: Float64Array } | null = null;
  for (const seed of seeds) {
    if (!seed) continue;
    const res = lloydKMeans(data, dim, Float64Array.from([...start.flatMap((c) => Array.from(c)), ...seed]), opts.maxIterations, 1e-4);
    const c = start.length;
    let fresh = 0;
    let old = 0;
    const sum = new Float64Array(dim);
    res.clusters.forEach((a, i) => {
      if (a !== c) return;
      if (i < panel) old++;
      else (fresh++, vectorSum(points, dim, [i], sum));
    });
    // The admission size is checked on the final members (below): Lloyd's cluster is the core.
    if (fresh < Math.min(opts.minClusterSize, s.newCount) || fresh < STORY_NEW_SHARE * (fresh + old)) continue;
    if (!pick || fresh > pick.fresh) pick = { fresh, sum };
  }
  return pick;
}

/** Stories found this run at least STORY_PIECES_COSINE alike are pieces of one: merged, closest pair first (in place). */
function joinStoryPieces(found: Float32Array[], foundSums: Float64Array[], dim: number): void {
  for (;;) {
    let pair: [number, number] | null = null;
    let bs = STORY_PIECES_COSINE;
    for (let a = 0; a < found.length; a++)
      for (let b = a + 1; b < found.length; b++) {
        const ab = dot(found[a]!, 0, found[b]!, 0, dim);
        if (ab >= bs) ((bs = ab), (pair = [a, b]));
      }
    if (!pair) break;
    const [a, b] = pair;
    for (let d = 0; d < dim; d++) foundSums[a]![d]! += foundSums[b]![d]!;
    found[a] = unitOf(foundSums[a]!);
    found.splice(b, 1);
    foundSums.splice(b, 1);
  }
}

/**
 * Every new post to its nearest centre, served or found; the found ones' posts are the stories. A
 * served centre competes for a post only when the post is as close to it as its own members are
 * (memberFloor): a story's post that shares a word with an old narrative is not that narrative's.
 */
function storyMembers(
  vectors: Float32Array,
  dim: number,
  newRows: readonly number[],
  prior: readonly Float32Array[],
  floors: readonly number[],
  found: readonly Float32Array[],
  noiseSimilarity: number,
): number[][] {
  const stories: number[][] = found.map(() => []);
  for (const r of newRows) {
    let served = -Infinity;
    for (let p = 0; p < prior.length; p++) {
      const s = dot(vectors, r * dim, prior[p]!, 0, dim);
      if (s >= floors[p]! && s > served) served = s;
    }
    let best = -1;
    let bs = Math.max(served, noiseSimilarity);
    for (let f = 0; f < found.length; f++) {
      const s = dot(vectors, r * dim, found[f]!, 0, dim);
      if (s >= bs) ((bs = s), (best = f));
    }
    if (best >= 0) stories[best]!.push(r);
  }
  return stories;
}

/**
 * Step 1b: the new posts that form a story of their own. Placed one by one (step 2), the posts of a
 * new story join whichever served cluster is nearest, each on its own: the 30 posts of a planted
 * kombucha recall went to a skincare scare's narrative and others, and the few left over were cut
 * in pieces (step 3 clusters them alone, from kMin clusters up). So the new posts are clustered
 * beside a panel of each served cluster's members, from the served centres plus one fresh centre
 * (k-means++ continued from them: it lands among posts far from every served centre), as the full
 * run would see them. The fresh centre's cluster is a new story when it has the admission size in
 * new posts, is at least STORY_NEW_SHARE new posts, and its centre is less alike than MATCH_COSINE
 * to every served centre (else it continues a served story, whose key it would have matched);
 * found, it joins the centres and the next fresh one is tried (one story at a time: a free choice
 * of several fresh centres by silhouette cut the 30 posts in two). Every new post nearer a story's
 * centre than to any served one, and at least noiseSimilarity close, is the story's.
 */
function newStories(
  vectors: Float32Array,
  dim: number,
  newRows: number[],
  kept: number[][],
  centres: Array<Float32Array | null>,
  minSize: number,
  opts: ClusterOptions,
): number[][] {
  const prior = centres.filter((c): c is Float32Array => c !== null);
  if (newRows.length < minSize || prior.length === 0) return [];
  const panel = kept.flatMap((m) => evenly(m, STORY_PANEL));
  const union = [...panel, ...evenly(newRows, STORY_SAMPLE)];
  const points = new Float32Array(union.length * dim);
  union.forEach((r, i) => points.set(vectors.subarray(r * dim, (r + 1) * dim), i * dim));
  const fresher = evenly(union.map((_, i) => i).slice(panel.length), STORY_SEED_SAMPLE);
  const rows: StoryRows = { dim, points, data: Float64Array.from(points), panel: panel.length, fresher, newCount: newRows.length, opts };
  const found: Float32Array[] = [];
  const foundSums: Float64Array[] = [];
  for (let round = 0; round < STORY_MAX; round++) {
    const start = [...prior, ...found];
    const pick = freshCluster(rows, start, round);
    if (!pick) break;
    const sum = pick.sum;
    const centre = unitOf(sum);
    let alike = -Infinity;
    let nearest = -1;
    start.forEach((p, q) => {
      const a = dot(centre, 0, p, 0, dim);
      if (a > alike) ((alike = a), (nearest = q));
    });
    if (nearest >= prior.length) {
      // Nearest to a story found this run: more of that story (posts the fresh centre took from it).
      const f = nearest - prior.length;
      for (let d = 0; d < dim; d++) foundSums[f]![d]! += sum[d]!;
      found[f] = unitOf(foundSums[f]!);
      continue;
    }
    if (alike >= MATCH_COSINE) break;
    found.push(centre);
    foundSums.push(sum);
  }
  if (found.length === 0) return [];
  joinStoryPieces(found, foundSums, dim);
  const floors = kept.filter((_, p) => centres[p] !== null).map((m, q) => memberFloor(vectors, dim, m, prior[q]!));
  return storyMembers(vectors, dim, newRows, prior, floors, found, opts.noiseSimilarity).filter((st) => st.length >= minSize);
}

/**
 * The narratives' story rules (stories.ts), kept on an incremental run: a new post joins a served
 * narrative only when it holds one of the narrative's key terms; a new story must pass the key
 * test (its posts without a key term are noise); the posts left over are clustered into stories.
 */
export interface StoryMode {
  words: StoryWords;
  opts: StoryOptions;
}

/** Steps 1-4 for one window. */
function place(
  vectors: Float32Array,
  dim: number,
  hasVector: Uint8Array,
  isNew: Uint8Array,
  w: MergeWindow,
  opts: ClusterOptions,
  story?: StoryMode,
): Placed {
  const rows: number[] = [];
  for (let r = w.firstRow; r < hasVector.length; r++) if (hasVector[r]) rows.push(r);
  const lexicon = story ? new StoryLexicon(story.words, rows, story.opts.keyTerms) : null;
  const minSize = Math.max(opts.minClusterSize, Math.ceil(opts.minClusterShare * rows.length));
  // 1. The previous clusters' members still in the window, and their vectors' sums.
  const kept: number[][] = [];
  const sums: Float64Array[] = [];
  const member = new Uint8Array(hasVector.length);
  for (const p of w.previous) {
    const m: number[] = [];
    const left: number[] = [];
    for (let k = 0; k < p.members.length; k++) {
      const r = p.members[k]!;
      if (r >= hasVector.length || !hasVector[r]) continue;
      if (r >= w.firstRow) (m.push(r), (member[r] = 1));
      else left.push(r);
    }
    kept.push(m);
    sums.push(p.sum ? vectorSum(vectors, dim, left, Float64Array.from(p.sum), -1) : vectorSum(vectors, dim, m));
  }
  const centres = kept.map((m, p) => (m.length ? unitOf(sums[p]!) : null));
  // 1b. New stories among the new posts, found beside the served clusters (newStories).
  const newRows = rows.filter((r) => isNew[r] && !member[r]);
  const found = newStories(vectors, dim, newRows, kept, centres, minSize, opts);
  const stories = lexicon
    ? found.map((st) => lexicon.story(st, story!.opts.keyCoverage)).filter((st): st is number[] => st !== null)
    : found;
  const keys = lexicon ? kept.map((m) => lexicon.keysOf(m)) : null;
  const inStory = new Uint8Array(hasVector.length);
  for (const st of stories) for (const r of st) inStory[r] = 1;
  // 2. New posts join the nearest previous cluster when close enough.
  const left: number[] = [];
  let joined = 0;
  for (const r of newRows) {
    if (inStory[r]) continue;
    let best = -1;
    let bs = -Infinity;
    for (let p = 0; p < centres.length; p++) {
      const c = centres[p];
      if (!c) continue;
      const s = dot(vectors, r * dim, c, 0, dim);
      if (s > bs) ((bs = s), (best = p));
    }
    if (best >= 0 && bs >= opts.noiseSimilarity && (!keys || lexicon!.holds(r, keys[best]!))) {
      kept[best]!.push(r);
      vectorSum(vectors, dim, [r], sums[best]!);
      joined++;
    } else left.push(r);
  }
  // 3. What is left, clustered among itself.
  const fresh: number[][] = [];
  // A new cluster needs minSize members: fewer posts left than that cannot found one (k-means spared).
  if (left.length >= minSize) {
    // No more clusters than could pass the admission rule: the k search stops at left / minSize.
    const cl = story
      ? clusterStories(vectors, dim, left, story.words, story.opts)
      : clusterWindow(vectors, dim, left, { ...opts, kMax: Math.max(opts.kMin, Math.floor(left.length / minSize)) });
    const by = new Map<number, number[]>();
    cl.assignment.forEach((c, i) => {
      if (c < 0) return;
      const list = by.get(c) ?? [];
      list.push(left[i]!);
      by.set(c, list);
    });
    for (const c of [...by.keys()].sort((a, b) => a - b)) fresh.push(by.get(c)!);
  }
  // 4. The admission rule over the window.
  const finals: Placed['finals'] = [];
  kept.forEach((m, p) => {
    if (m.length >= minSize) finals.push({ members: ascending(m), origin: p, sum: sums[p]! });
  });
  let founded = 0;
  for (const m of [...stories, ...fresh]) {
    if (m.length < minSize) continue;
    finals.push({ members: ascending(m), origin: null, sum: vectorSum(vectors, dim, m) });
    founded += m.length;
  }
  // 4b. Step 5 of the story rules over the whole window, its earlier noise included: a small story
  // arriving hour by hour is found once its new word bursts, as the full run finds it.
  if (story?.words.days) founded += burstFinals(vectors, dim, rows, finals, lexicon!, story, story.words.days, minSize, isNew);
  let newInWindow = 0;
  for (const r of rows) newInWindow += isNew[r]!;
  return { rows, finals, placed: { joined, founded, noise: newInWindow - joined - founded } };
}

/** Step 4b: the stories of bursting new words (word-bursts.ts) among the window's posts no final cluster holds; the new posts in them. */
function burstFinals(
  vectors: Float32Array,
  dim: number,
  rows: readonly number[],
  finals: Placed['finals'],
  lexicon: StoryLexicon,
  story: StoryMode,
  days: Int32Array,
  minSize: number,
  isNew: Uint8Array,
): number {
  const taken = new Uint8Array(days.length);
  for (const f of finals) for (const r of f.members) taken[r] = 1;
  const found = burstStories({
    space: { vectors, dim },
    rows,
    days,
    lexicon,
    taken,
    minSize,
    noiseSimilarity: story.opts.noiseSimilarity,
  });
  let founded = 0;
  for (const st of found) {
    finals.push({ members: st.rows, origin: null, sum: vectorSum(vectors, dim, st.rows) });
    for (const r of st.rows) founded += isNew[r]!;
  }
  return founded;
}

/**
 * Merge this run's new posts (`isNew`) of each window [firstRow, end) into its previous clusters
 * (each one's member rows in this generation). Rows without a vector (`hasVector` 0, masked rows
 * included) are never members. Step 5 of every window runs in one pass over the rows: a row's
 * vector is read once for its cosines to its clusters' centres in all windows (reading the vectors
 * is what step 5 costs at a million rows).
 */
export function mergeWindowsIntoPrevious(
  vectors: Float32Array,
  dim: number,
  hasVector: Uint8Array,
  isNew: Uint8Array,
  windows: readonly MergeWindow[],
  opts: ClusterOptions,
  story?: StoryMode,
): MergedRange[] {
  const n = hasVector.length;
  const placed = windows.map((w) => place(vectors, dim, hasVector, isNew, w, opts, story));
  // 5. Centres of the final members; then each member's cosine to its centre, every window in one pass.
  const out = placed.map((p) => {
    const k = p.finals.length;
    const centroids = new Float32Array(k * dim);
    p.finals.forEach((f, c) => centroids.set(unitOf(f.sum), c * dim));
    const clusterOf = new Int32Array(n).fill(-1);
    p.finals.forEach((f, c) => {
      for (const r of f.members) clusterOf[r] = c;
    });
    const position = new Int32Array(n);
    for (let i = 0; i < p.rows.length; i++) position[p.rows[i]!] = i;
    const idx = p.finals.map(() => [] as number[]);
    return {
      p,
      centroids,
      clusterOf,
      position,
      idx,
      assignment: new Int32Array(p.rows.length).fill(-1),
      similarity: new Float32Array(p.rows.length),
    };
  });
  const from = Math.min(n, ...windows.map((w) => w.firstRow));
  for (let r = from; r < n; r++) {
    for (const w of out) {
      const c = w.clusterOf[r]!;
      if (c < 0) continue;
      const i = w.position[r]!;
      w.assignment[i] = c;
      w.similarity[i] = dot(vectors, r * dim, w.centroids, c * dim, dim);
      w.idx[c]!.push(i);
    }
  }
  return out.map((w) => {
    const clustering: Clustering = {
      k: w.p.finals.length,
      centroids: w.centroids,
      kept: w.p.finals.map(() => true),
      assignment: w.assignment,
      similarity: w.similarity,
      silhouette: NaN,
      tried: [],
      warmStart: true,
    };
    return {
      rows: w.p.rows,
      clustering,
      clusters: w.p.finals.map((_, c) => c),
      byCluster: new Map(w.idx.map((list, c) => [c, list])),
      origin: w.p.finals.map((f) => f.origin),
      placed: w.p.placed,
    };
  });
}
