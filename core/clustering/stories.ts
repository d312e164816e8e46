// The narratives' clustering: a window's stories, with noise allowed. Real posts are mostly
// everyday talk; a partition of every post (k-means alone) makes catch-all "narratives" of it
// ("love, time, day": 17,434 of CrisisLexT6's 60,078 tweets). A story is told in shared words, so
// a group of posts is a narrative only when most of its posts name one of its key terms:
//   1. micro-clusters: k-means (k-means++ seeding, the previous generation's narrative centres
//      first) on an evenly spaced sample of the window, about `microSize` sample posts each: finer
//      than any story, so a story and the chatter beside it fall into different micro-clusters;
//      every post of the window joins its nearest micro-centre by cosine;
//   2. the key test: a micro-cluster's key terms are its `keyTerms` words (held by 2 posts or
//      more) of highest c-TF-IDF against the window (share of its posts that hold the word x ln(1 + posts of the window /
//      posts of the window that hold it)); its key coverage is the share of its posts holding at
//      least one of them. Coverage >= keyCoverage: a piece of a story; below: everyday talk, noise.
//      Generic talk ("love, time, day") fails it: its posts share a tone, not words;
//   3. merging: two pieces are one story when their centres are at least as close as their
//      members are to their own centres (cosine of the centres >= the mean of their members' mean
//      cosine to their centre), or at least MATCH_COSINE alike (what makes a narrative the same
//      story across generations makes two pieces one story within one: templated or retweeted
//      posts sit at cosine 0.98 to their centre, and pieces of one such story at 0.90-0.98); below
//      MATCH_COSINE the union's key terms must also cover each of them (keyCoverage of each one's
//      posts: a small story beside a large one is not swallowed by the large one's words). The
//      closest such pair is merged first, until none is left. No k is given: the data's own spread
//      decides. Then fragments (pieces under the story size of step 4) join the closest piece at
//      least noiseSimilarity alike whose union passes the same key-term check;
//   4. members: a post holding none of its story's key terms leaves it (noise), as does one less
//      similar than noiseSimilarity to the story's centre; a story left with fewer than
//      max(minClusterSize, minClusterShare x posts) posts is noise;
//   5. bursting words (word-bursts.ts, when the words carry each row's day): a small story in
//      words the embedding has never met scatters over micro-clusters; a word far above its own
//      daily baseline seeds it among the posts steps 1-4 left out.
// docs/fields.md ("Which posts form a narrative") states the rule for readers.
import { dot } from '../vectors/dot.ts';
import { F32Nearest } from '../vectors/f32-dots.ts';
import { KEY_TERMS, StoryLexicon, type StoryWords } from './story-lexicon.ts';
import { cohesionOf, sumOf, unit, type Space } from './story-space.ts';
import { MATCH_COSINE } from './tracking.ts';
import { burstStories } from './word-bursts.ts';
import { noClusters, normaliseRows, rangeOf, runKMeans, spread, type Clustering, type ClusteredRange } from './kmeans-by-silhouette.ts';
import { seedCentres } from '../stats/kmeans-plus-plus.ts';

export interface StoryOptions {
  seed: number;
  /** Rows the micro k-means sees. */
  sample: number;
  /** Sample rows per micro-cluster (k = sample rows / microSize, at most maxMicro). */
  microSize: number;
  maxMicro: number;
  /** Least posts of the window per micro-cluster: a key test on a few posts is chance. */
  microPosts: number;
  maxIterations: number;
  /** Words that name a story (its key terms). */
  keyTerms: number;
  /** Least share of a story's posts that hold one of its key terms. */
  keyCoverage: number;
  noiseSimilarity: number;
  minClusterSize: number;
  minClusterShare: number;
}

/** Least posts of a micro-cluster put to the key test (a story split between micro-clusters merges back from pieces this small). */
const PIECE_MIN = 5;

export const STORY_DEFAULTS: StoryOptions = {
  seed: 42,
  sample: 4000,
  // 4,000 x 20 (k = 200): on CrisisLexT6 (60,078 tweets) the same stories as 8,000 x 40 in a
  // third of the time (k-means on the sample is most of this clustering's cost).
  microSize: 20,
  maxMicro: 200,
  microPosts: 10,
  maxIterations: 20,
  keyTerms: KEY_TERMS,
  // 0.8: on CrisisLexT6's window `all`, 0.8 kept 87% of the crisis tweets and 26% of the
  // everyday ones; 0.7 kept 1 point more of the first and 5 more of the second.
  keyCoverage: 0.8,
  noiseSimilarity: 0.2,
  // Under 15 posts, groups that passed the key test in CrisisLexT6's week of 5,137 tweets were
  // mostly coincidences of everyday words ("head, clean, bored"); at 20, a hand-written story of 20
  // posts among 3,000 real tweets was lost (18 of its posts name its key terms).
  minClusterSize: 15,
  minClusterShare: 0.002,
};

interface Piece {
  rows: number[];
  sum: Float64Array;
  /** Mean cosine of its members to its centre. */
  cohesion: number;
  keys: number[];
}

/** Step 1: k-means on the sample (prior centres first); every row to its nearest micro-centre. */
function microClusters(
  space: Space,
  rows: readonly number[],
  opts: StoryOptions,
  prior: readonly Float32Array[],
): { k: number; warm: readonly Float32Array[]; byMicro: number[][] } {
  const { vectors, dim } = space;
  const n = rows.length;
  const sampleIdx = spread(n, opts.sample);
  const m = sampleIdx.length;
  const samplePoints = new Float32Array(m * dim);
  sampleIdx.forEach((s, i) => samplePoints.set(vectors.subarray(rows[s]! * dim, (rows[s]! + 1) * dim), i * dim));
  const all = sampleIdx.map((_, i) => i);
  const k = Math.max(2, Math.min(opts.maxMicro, Math.floor(m / opts.microSize), Math.floor(n / opts.microPosts)));
  const warm = prior.slice(0, k);
  const res = runKMeans(samplePoints, dim, all, seedCentres(samplePoints, dim, all, k, opts.seed, warm), opts.maxIterations);
  const micro = normaliseRows(res.centroids, dim);
  const byMicro: number[][] = Array.from({ length: k }, () => []);
  // n x k inner products: most of the stage's time, so by SIMD (core/vectors/f32-dots.ts).
  const nearest = new Int32Array(n);
  new F32Nearest(micro, dim).nearestInto(vectors, rows, nearest);
  for (let i = 0; i < n; i++) byMicro[nearest[i]!]!.push(rows[i]!);
  return { k, warm, byMicro };
}

/** Step 2: the micro-clusters that pass the key test, as pieces of stories. */
function keyedPieces(space: Space, byMicro: readonly number[][], counter: StoryLexicon, opts: StoryOptions): Piece[] {
  const pieces: Piece[] = [];
  for (const members of byMicro) {
    if (members.length < PIECE_MIN) continue;
    const keys = counter.keysOf(members);
    if (counter.coverage(members, keys) < opts.keyCoverage) continue;
    const sum = sumOf(space, members);
    pieces.push({ rows: members, sum, cohesion: cohesionOf(space, members, unit(sum)), keys });
  }
  return pieces;
}

/**
 * Step 3: merge the closest pair of pieces of one story, while one is left. Pieces are few (at most
 * maxMicro): their cosines are kept in a matrix and a merge computes only the new piece's row.
 */
function mergePieces(space: Space, pieces: Piece[], counter: StoryLexicon, minSize: number, opts: StoryOptions): Piece[] {
  const { dim } = space;
  const alive = pieces.map(() => true);
  const centres = pieces.map((p) => unit(p.sum));
  const cos: Float64Array[] = centres.map((a) => Float64Array.from(centres, (b) => dot(a, 0, b, 0, dim)));
  const refused = new Set<number>();
  // Two rounds: first pieces as close as their posts (or MATCH_COSINE); then fragments, pieces too
  // small to be a story alone, each to the closest piece whose words tell it (the key test below).
  // A 30-post story of a 172-post week came out as two fragments of 12 and 15, 0.7 alike.
  for (let round = 0; round < 2;) {
    const best = closestPair(pieces, alive, cos, refused, round, minSize, opts);
    if (!best) {
      round++;
      continue;
    }
    const { a, b } = best;
    const pa = pieces[a]!;
    const pb = pieces[b]!;
    const union = [...pa.rows, ...pb.rows];
    const keys = counter.keysOf(union);
    // Below MATCH_COSINE the union's words must still tell both: loose real text chains otherwise
    // (pieces of everyday talk, each passing alone, made one "night, day, stop, thing" of 4,202).
    if (cos[a]![b]! < MATCH_COSINE && Math.min(counter.coverage(pa.rows, keys), counter.coverage(pb.rows, keys)) < opts.keyCoverage) {
      refused.add(a * 65536 + b);
      continue;
    }
    const sum = pa.sum.map((x, i) => x + pb.sum[i]!);
    const centre = unit(sum);
    pieces.push({ rows: union, sum, cohesion: cohesionOf(space, union, centre), keys });
    alive[a] = alive[b] = false;
    alive.push(true);
    centres.push(centre);
    const row = Float64Array.from(centres, (c) => dot(centre, 0, c, 0, dim));
    cos.forEach((r, i) => {
      const grown = new Float64Array(r.length + 1);
      grown.set(r);
      grown[r.length] = row[i]!;
      cos[i] = grown;
    });
    cos.push(row);
  }
  return pieces.filter((_, i) => alive[i]);
}

/** The live pair of the round's largest gain (none below 0, none refused); null when none is left. */
function closestPair(
  pieces: readonly Piece[],
  alive: readonly boolean[],
  cos: readonly Float64Array[],
  refused: ReadonlySet<number>,
  round: number,
  minSize: number,
  opts: StoryOptions,
): { a: number; b: number; gain: number } | null {
  let best: { a: number; b: number; gain: number } | null = null;
  for (let a = 0; a < pieces.length; a++) {
    if (!alive[a]) continue;
    for (let b = a + 1; b < pieces.length; b++) {
      if (!alive[b] || refused.has(a * 65536 + b)) continue;
      const gain =
        round === 0
          ? cos[a]![b]! - Math.min((pieces[a]!.cohesion + pieces[b]!.cohesion) / 2, MATCH_COSINE)
          : Math.min(pieces[a]!.rows.length, pieces[b]!.rows.length) < minSize
            ? cos[a]![b]! - opts.noiseSimilarity
            : -1;
      if (gain >= 0 && (!best || gain > best.gain)) best = { a, b, gain };
    }
  }
  return best;
}

/** Step 4: each piece's members that hold a key term and are close enough; the stories large enough. */
function keptStories(
  space: Space,
  pieces: readonly Piece[],
  counter: StoryLexicon,
  minSize: number,
  opts: StoryOptions,
): Array<{ rows: number[]; centre: Float32Array }> {
  const { vectors, dim } = space;
  const stories: Array<{ rows: number[]; centre: Float32Array }> = [];
  for (const p of pieces) {
    const centre = unit(p.sum);
    const kept = p.rows.filter((r) => counter.holds(r, p.keys) && dot(vectors, r * dim, centre, 0, dim) >= opts.noiseSimilarity);
    if (kept.length >= minSize) stories.push({ rows: kept.sort((x, y) => x - y), centre: unit(sumOf(space, kept)) });
  }
  return stories;
}

/** The stories as a Clustering of `rows`: each row's story (-1: noise) and its cosine to that centre, or to the nearest one for noise. */
function storyClustering(
  { vectors, dim }: Space,
  rows: readonly number[],
  stories: ReadonlyArray<{ rows: number[]; centre: Float32Array }>,
): Pick<Clustering, 'k' | 'centroids' | 'kept' | 'assignment' | 'similarity'> {
  const n = rows.length;
  const position = new Map<number, number>();
  rows.forEach((r, i) => position.set(r, i));
  const assignment = new Int32Array(n).fill(-1);
  const similarity = new Float32Array(n);
  const centroids = new Float32Array(stories.length * dim);
  stories.forEach((s, c) => {
    centroids.set(s.centre, c * dim);
    for (const r of s.rows) {
      const i = position.get(r)!;
      assignment[i] = c;
      similarity[i] = dot(vectors, r * dim, s.centre, 0, dim);
    }
  });
  // Rows outside every story: their cosine to the nearest story centre (the noise they are).
  for (let i = 0; i < n; i++) {
    if (assignment[i]! >= 0) continue;
    let bs = 0;
    for (let c = 0; c < stories.length; c++) bs = Math.max(bs, dot(vectors, rows[i]! * dim, centroids, c * dim, dim));
    similarity[i] = bs;
  }
  return { k: stories.length, centroids, kept: stories.map(() => true), assignment, similarity };
}

/**
 * The window's stories (see the header): `rows` are indices into `vectors` (unit vectors of `dim`),
 * `words` each row's words; `prior` the previous generation's narrative centres of this window
 * (seeded first, so a continuing story's micro-clusters form where they were).
 */
export function clusterStories(
  vectors: Float32Array,
  dim: number,
  rows: readonly number[],
  words: StoryWords,
  opts: StoryOptions = STORY_DEFAULTS,
  prior: readonly Float32Array[] = [],
): Clustering {
  const n = rows.length;
  const minSize = Math.max(opts.minClusterSize, Math.ceil(opts.minClusterShare * n));
  if (n < 2 * minSize) return noClusters(n);
  const space: Space = { vectors, dim };
  const { k, warm, byMicro } = microClusters(space, rows, opts, prior);
  // The key test, against the window's document frequencies.
  const counter = new StoryLexicon(words, rows, opts.keyTerms);
  const pieces = mergePieces(space, keyedPieces(space, byMicro, counter, opts), counter, minSize, opts);
  const stories = keptStories(space, pieces, counter, minSize, opts);
  if (words.days) {
    const taken = new Uint8Array(words.days.length);
    for (const st of stories) for (const r of st.rows) taken[r] = 1;
    const burst = { space, rows, days: words.days, lexicon: counter, taken, minSize };
    stories.push(...burstStories({ ...burst, noiseSimilarity: opts.noiseSimilarity }));
  }
  // In the order of their first post, so that ids follow the data, not the merge order.
  stories.sort((x, y) => x.rows[0]! - y.rows[0]!);
  return { ...storyClustering(space, rows, stories), silhouette: 0, tried: [{ k, silhouette: 0 }], warmStart: warm.length > 0 };
}

/** clusterStories over the rows from `firstRow` on that have a vector, as clusterRange gives them. */
export function clusterStoryRange(
  vectors: Float32Array,
  dim: number,
  hasVector: Uint8Array,
  firstRow: number,
  words: StoryWords,
  opts: StoryOptions = STORY_DEFAULTS,
  prior?: readonly Float32Array[],
): ClusteredRange {
  return rangeOf(hasVector, firstRow, (rows) => clusterStories(vectors, dim, rows, words, opts, prior));
}
