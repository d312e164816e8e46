// Step 5 of the story clustering (stories.ts): stories that a bursting new word tells. A small new
// story (20 hand-written posts of a ferry strike among 3,500 real tweets) is told in words the
// embedding has never met: its posts scatter over a dozen micro-clusters, none of which passes the
// key test. What marks it is time. As in SigniTrend (Schubert et al., KDD 2014), each word's daily
// count is scored against its own baseline with a floor for rare words: z = (c_d - e) / sqrt(e +
// 5), e the median of its daily counts over the window's active days. A word new to the window (z
// >= 3 on its peak day, its run of days above e short and holding most of its posts, more of them
// left out of stories than in) seeds a story from the posts no story holds: those holding it on
// its run, then those of the run and a day either side holding two of the seed's words of highest
// c-TF-IDF (the story's posts that no longer repeat its name). Its members are kept as step 4 keeps
// a story's (one of those words, noiseSimilarity to the centre); a story when minSize are left.
// Steady words never reach z 3 (a word of 5 posts a day needs 10 more on one day); the crises'
// words do, but their runs are long and their posts in stories already. An incremental run
// applies it over the whole window (merge-models.ts, step 4b), its earlier noise included.
import { dot } from '../vectors/dot.ts';
import type { StoryLexicon } from './story-lexicon.ts';
import { sumOf, unit, type Space } from './story-space.ts';

/** A word's peak day must be this far above its baseline. */
const BURST_Z = 3;
/** The floor of the baseline's variance: a word from 0 to 3 posts a day is chance. */
const RARE_FLOOR = 5;
/** A post of the run without the seed word joins when it holds JOIN_KEYS of the seed's JOIN_WORDS words of highest c-TF-IDF. */
const JOIN_WORDS = 10;
const JOIN_KEYS = 2;
/** Least share of the run's posts of the word that are its excess over the baseline. */
const EXCESS_SHARE = 0.5;
/**
 * A seed is a word new to the window: its run at most this many days, holding NEW_SHARE of its
 * posts. A longer story has had time to be learnt and found by steps 1-4; what a word that has long
 * bursted left out of them is its stories' noise (on CrisisLexT6, seeds of any run made 7 more
 * narratives of the crises' left-out posts, theme purity 0.887 -> 0.870).
 */
const MAX_RUN_DAYS = 4;
const NEW_SHARE = 0.8;
/** Day-by-word cells counted at most (4 bytes each): a longer window skips this step. */
const MAX_CELLS = 32_000_000;

interface BurstInput {
  space: Space;
  rows: readonly number[];
  /** Each row's day (indexed by row). */
  days: Int32Array;
  lexicon: StoryLexicon;
  /** By row: 1 when a story of steps 1-4 holds it. */
  taken: Uint8Array;
  minSize: number;
  noiseSimilarity: number;
}

interface Seed {
  word: number;
  z: number;
  /** First and last day of its run (offsets from the window's first day). */
  from: number;
  to: number;
}

function median(values: number[]): number {
  values.sort((a, b) => a - b);
  const m = values.length >> 1;
  return values.length % 2 ? values[m]! : (values[m - 1]! + values[m]!) / 2;
}

/** Each frequent word's daily counts, scored; the seeds, strongest first. */
function seedsOf({ rows, days, lexicon, minSize }: BurstInput, first: number, span: number): Seed[] {
  const words = lexicon.wordsHeldBy(Math.ceil(minSize / 2));
  if (words.length === 0 || words.length * span > MAX_CELLS) return [];
  const slot = new Map<number, number>();
  words.forEach((w, i) => slot.set(w, i));
  const counts = new Int32Array(words.length * span);
  const active: number[] = [];
  const isActive = new Uint8Array(span);
  for (const r of rows) {
    const d = days[r]! - first;
    if (!isActive[d]) ((isActive[d] = 1), active.push(d));
    lexicon.eachWord(r, (id) => {
      const s = slot.get(id);
      if (s !== undefined) counts[s * span + d]!++;
    });
  }
  const seeds: Seed[] = [];
  words.forEach((word, s) => {
    const c = (d: number) => counts[s * span + d]!;
    const e = median(active.map(c));
    let peak = active[0]!;
    for (const d of active) if (c(d) > c(peak)) peak = d;
    const z = (c(peak) - e) / Math.sqrt(e + RARE_FLOOR);
    if (z < BURST_Z) return;
    let from = peak;
    let to = peak;
    while (from > 0 && c(from - 1) > e) from--;
    while (to < span - 1 && c(to + 1) > e) to++;
    let all = 0;
    for (let d = from; d <= to; d++) all += c(d);
    const held = active.reduce((sum, d) => sum + c(d), 0);
    if (to - from < MAX_RUN_DAYS && all >= NEW_SHARE * held && all - e * (to - from + 1) >= EXCESS_SHARE * all)
      seeds.push({ word, z, from, to });
  });
  return seeds.sort((a, b) => b.z - a.z || a.word - b.word);
}

/** The stories the window's bursting words tell among the posts not taken (marked taken as found). */
export function burstStories(input: BurstInput): Array<{ rows: number[]; centre: Float32Array }> {
  const { space, rows, days, lexicon, taken, minSize, noiseSimilarity } = input;
  if (rows.length === 0) return [];
  let first = Infinity;
  let last = -Infinity;
  for (const r of rows) ((first = Math.min(first, days[r]!)), (last = Math.max(last, days[r]!)));
  const span = last - first + 1;
  const byDay: number[][] = Array.from({ length: span }, () => []);
  for (const r of rows) byDay[days[r]! - first]!.push(r);
  // A word most of whose posts of the run are in stories names a story told already: those it left
  // out are that story's noise, not another story (CrisisLexT6's "#yyc" seeded 2,132 posts the
  // Alberta floods' narratives left out, Calgary's everyday talk among them).
  const toldPosts = (seed: Seed, word: readonly number[]) => {
    let n = 0;
    for (let d = seed.from; d <= seed.to; d++) for (const r of byDay[d]!) if (taken[r] && lexicon.holds(r, word)) n++;
    return n;
  };
  const out: Array<{ rows: number[]; centre: Float32Array }> = [];
  for (const seed of seedsOf(input, first, span)) {
    // The seed word as the key list the lexicon takes: one array per seed, not one per post.
    const word = [seed.word];
    // Posts of the run and a day either side: a story's later posts drop its name ("day three of the ferry strike").
    const free = byDay.slice(Math.max(0, seed.from - 1), seed.to + 2).flatMap((list) => list.filter((r) => !taken[r]));
    const inRun = (r: number) => days[r]! - first >= seed.from && days[r]! - first <= seed.to;
    const group = free.filter((r) => inRun(r) && lexicon.holds(r, word));
    const inGroup = new Set(group);
    if (2 * group.length < minSize || group.length < toldPosts(seed, word)) continue;
    const keys = lexicon.weightsOf(group, JOIN_WORDS).ids;
    const joined = free.filter((r) => !inGroup.has(r) && lexicon.heldCount(r, keys) >= JOIN_KEYS);
    const members = [...group, ...joined];
    const centre = unit(sumOf(space, members));
    const kept = members.filter(
      (r) => lexicon.holds(r, keys) && dot(space.vectors, r * space.dim, centre, 0, space.dim) >= noiseSimilarity,
    );
    if (kept.length < minSize) continue;
    for (const r of kept) taken[r] = 1;
    kept.sort((x, y) => x - y);
    out.push({ rows: kept, centre: unit(sumOf(space, kept)) });
  }
  return out;
}
