// A narrative's daily series within its window and what is read off it: velocity, acceleration,
// momentum, emergence, lifecycle, and how much to trust them. Formulas and ranges are in
// docs/fields.md ("Narratives"). Day D-1 is the day that ends at the as-of instant; day 0 the
// window's first.
import { DAY_MS } from '../snapshots/windows.ts';

export type Lifecycle = 'emerging' | 'growing' | 'peaking' | 'declining' | 'dormant' | 'steady';

export interface SeriesStats {
  days: number;
  counts: Float64Array;
  velocity: number | null;
  acceleration: number | null;
  momentumScore: number;
  emergingScore: number;
  /** burstScore's value: the largest damped excess of a day over what its earlier days predict. */
  burstScore: number;
  lifecycle: Lifecycle | null;
  trajectoryConfidence: 'high' | 'medium' | 'low';
  /** Days from the start of the narrative's sustained activity (sustainedStart) to as-of. */
  ageDays: number;
}

/** Daily counts of posts at `times` (ms) over the `days` days that end at `asOfMs`. */
export function dailyCounts(times: ArrayLike<number>, asOfMs: number, days: number): Float64Array {
  const c = new Float64Array(days);
  for (let i = 0; i < times.length; i++) {
    const back = Math.floor((asOfMs - times[i]!) / DAY_MS);
    if (back >= 0 && back < days) c[days - 1 - back]!++;
  }
  return c;
}

/** Least-squares slope of y over x = 0..n-1 (0 for fewer than two points). */
export function slope(y: ArrayLike<number>, from = 0, to = y.length): number {
  const n = to - from;
  if (n < 2) return 0;
  const mx = (n - 1) / 2;
  let my = 0;
  for (let i = from; i < to; i++) my += y[i]!;
  my /= n;
  let num = 0;
  let den = 0;
  for (let i = from; i < to; i++) {
    const dx = i - from - mx;
    num += dx * (y[i]! - my);
    den += dx * dx;
  }
  return num / den;
}

function mean(y: ArrayLike<number>, from: number, to: number): number {
  if (to <= from) return 0;
  let s = 0;
  for (let i = from; i < to; i++) s += y[i]!;
  return s / (to - from);
}

/** Centred moving average over `w` days (shorter at the edges). */
function smooth(y: Float64Array, w = 7): Float64Array {
  const out = new Float64Array(y.length);
  const h = Math.floor(w / 2);
  for (let i = 0; i < y.length; i++) out[i] = mean(y, Math.max(0, i - h), Math.min(y.length, i + h + 1));
  return out;
}

/** A narrative is declining when its last DECLINE_DAYS days average under DECLINE_SHARE of its peak day. */
const DECLINE_DAYS = 3;
const DECLINE_SHARE = 0.25;

/**
 * Lifecycle from the shape of the series, first rule that applies:
 *   dormant    nothing (at most 2% of its posts) in the last 30 days of a window longer than that
 *   peaking    fallen: the peak day 3-21 days ago and the last 3 days averaging under a quarter of
 *              it, with a burst (burst_score 3 or more) or a fall of a Poisson z of 3 or more
 *   declining  fallen so from a peak day more than 21 days ago
 *   emerging   not fallen, and sustained activity (sustainedStart) began within the last 21 days
 *   declining  peak (7-day average) 28+ days ago, the last 14 days at most half its level, a drop of z >= 3
 *   peaking    peak 3-21 days ago, the last 3 days below 85% of it, a drop of z >= 3
 *   growing    not fallen, and the last third of the span from its start at least 1.5x the first
 *              third, the thirds' totals apart by a Poisson z of 2 or more
 *   steady     otherwise
 * The fall from the peak day comes before emerging: a story whose days are far below its peak is
 * past it, however young (issue 45: every crisis narrative was emerging, also one losing 10.8 posts
 * a day). Each change of level must be significant (drop, grows): the noise of steady talk made it
 * "peaking" or "declining" by chance. Null for a window of under 14 days: too short to tell a shape.
 */
export function lifecycleOf(counts: Float64Array, ageDays: number, burst = burstScoreOf(counts)): Lifecycle | null {
  const d = counts.length;
  if (d < 14) return null;
  let total = 0;
  for (const x of counts) total += x;
  if (total === 0) return null;
  if (d > 30) {
    let recent = 0;
    for (let i = d - 30; i < d; i++) recent += counts[i]!;
    if (recent <= 0.02 * total) return 'dormant';
  }
  let peakDay = 0;
  for (let i = 1; i < d; i++) if (counts[i]! > counts[peakDay]!) peakDay = i;
  const top = counts[peakDay]!;
  const last = mean(counts, d - DECLINE_DAYS, d);
  const sinceTop = d - 1 - peakDay;
  const fallen = sinceTop >= DECLINE_DAYS && last < DECLINE_SHARE * top;
  if (fallen && (burst >= BURSTY || drop(top, last, 1))) return sinceTop <= 21 ? 'peaking' : 'declining';
  if (!fallen && ageDays <= 21) return 'emerging';
  const s = smooth(counts);
  let peak = 0;
  for (let i = 1; i < d; i++) if (s[i]! > s[peak]!) peak = i;
  const sincePeak = d - 1 - peak;
  const level = s[peak]!;
  const last14 = mean(counts, d - 14, d);
  if (sincePeak >= 28 && last14 <= 0.5 * level && drop(level, last14, 14)) return 'declining';
  if (sincePeak >= 3 && sincePeak <= 21 && last < 0.85 * level && drop(level, last, DECLINE_DAYS)) return 'peaking';
  return !fallen && grows(counts, Math.max(0, d - Math.ceil(ageDays))) ? 'growing' : 'steady';
}

/** Whether `days` days at `recent` a day are below `level` a day by a Poisson z of 3 or more: sqrt(days) (level - recent) / sqrt(level). */
function drop(level: number, recent: number, days: number): boolean {
  return level > 0 && (Math.sqrt(days) * (level - recent)) / Math.sqrt(level) >= 3;
}

/** The burst_score from which a series has a burst (a day about 3 standard deviations over its expectation). */
const BURSTY = 3;

/**
 * Whether the last third of the span from `start` is at least 1.5x its first third and the two
 * thirds' totals differ by a Poisson z of at least 2, (L - F) / sqrt(L + F): 1 then 3 posts is noise.
 */
function grows(counts: Float64Array, start: number): boolean {
  const d = counts.length;
  const third = Math.max(1, Math.floor((d - start) / 3));
  const first = mean(counts, start, start + third) * third;
  const last = mean(counts, d - third, d) * third;
  return last >= 1.5 * Math.max(first, 1e-9) && (last - first) / Math.sqrt(last + first) >= 2;
}

/** A day starts sustained activity when it has at least this many posts and this share of the peak day. */
const SUSTAINED_MIN_POSTS = 2;
const SUSTAINED_PEAK_SHARE = 0.1;

/**
 * Days from the start of sustained activity to as-of: the first day of the series with at least
 * max(2, 10% of the peak day) posts, so stray older posts that share a story's words (5 "ferry"
 * tweets weeks before a ferry strike) do not make a 2-day-old story old. Day i of `counts` ends
 * (days - 1 - i) days before as-of; a series of single posts starts at its first post.
 */
export function sustainedStartAge(counts: Float64Array): number {
  const d = counts.length;
  let peak = 0;
  for (const x of counts) peak = Math.max(peak, x);
  const floor = Math.min(peak, Math.max(SUSTAINED_MIN_POSTS, SUSTAINED_PEAK_SHARE * peak));
  for (let i = 0; i < d; i++) if (counts[i]! > 0 && counts[i]! >= floor) return d - i;
  return 0;
}

/** Posts a day's expected count is padded with: a day of a few posts over nothing is no burst (SigniTrend's bias term). */
export const BURST_DAMPING = 5;
/** Earlier days a day's expectation is read from (its median), and the fewest that make one. */
const BURST_BASELINE_DAYS = 14;
const BURST_MIN_BASELINE_DAYS = 3;

/** The median of `xs` (0 for none); `xs` is left as it was. */
export function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length === 0 ? 0 : s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

/**
 * burst_score (docs/fields.md): the largest damped excess of one day of the window over what the
 * narrative's history predicts, max over days d of (c_d - e_d) / sqrt(e_d + B), B = BURST_DAMPING,
 * floored at 0. e_d, the expected count, is the median of its posts on the up to 14 days before d
 * on which the corpus has posts (`active`; all days when not given); a day with under 3 of them
 * takes the median over all the window's active days, its typical level. Days on which the corpus
 * has nothing (before the data begins, a gap in collection) say nothing of what to expect: counted
 * as zeros they would make everyday talk "break" on the corpus's first day. A significance against
 * the series' own baseline, in the spirit of SigniTrend (KDD 2014) and a Poisson z-score: steady
 * talk stays near 0 however noisy, a story that broke inside the window keeps the score of its
 * breaking day for as long as the window holds it, and B damps small counts (3 posts over nothing
 * score 1.3, 400 score 179).
 */
export function burstScoreOf(counts: ArrayLike<number>, active?: ArrayLike<number>): number {
  const d = counts.length;
  const on = (i: number) => !active || active[i]! > 0;
  const days: number[] = [];
  for (let i = 0; i < d; i++) if (on(i)) days.push(i);
  const typical = median(days.map((i) => counts[i]!));
  let best = 0;
  for (let k = 0; k < days.length; k++) {
    const i = days[k]!;
    const before = days.slice(Math.max(0, k - BURST_BASELINE_DAYS), k).map((j) => counts[j]!);
    const e = before.length >= BURST_MIN_BASELINE_DAYS ? median(before) : typical;
    best = Math.max(best, (counts[i]! - e) / Math.sqrt(e + BURST_DAMPING));
  }
  return best;
}

/**
 * A window's series and what is read off it; `active`, when given, marks the window's days (as
 * `counts`) on which the corpus has any post (burstScoreOf).
 */
export function seriesStats(times: ArrayLike<number>, asOfMs: number, windowDays: number, active?: ArrayLike<number>): SeriesStats {
  const days = Math.max(1, Math.ceil(windowDays));
  const counts = dailyCounts(times, asOfMs, days);
  const recentDays = Math.min(7, Math.floor(days / 2));
  const velocity = days >= 2 ? slope(counts, days - Math.min(7, days), days) : null;
  const acceleration = days >= 14 ? slope(counts, days - 7, days) - slope(counts, days - 14, days - 7) : null;
  const recentRate = mean(counts, days - recentDays, days);
  const earlierRate = mean(counts, 0, days - recentDays);
  const momentumScore = recentRate + earlierRate > 0 ? recentRate / (recentRate + earlierRate) : 0.5;
  const ageDays = sustainedStartAge(counts);
  const burstScore = burstScoreOf(counts, active);
  const emergingScore = momentumScore * Math.exp(-ageDays / 14);
  const activeDays = counts.reduce((a, x) => a + (x > 0 ? 1 : 0), 0);
  const trajectoryConfidence = times.length >= 50 && activeDays >= 7 ? 'high' : times.length >= 15 && activeDays >= 3 ? 'medium' : 'low';
  return {
    days,
    counts,
    velocity,
    acceleration,
    momentumScore,
    emergingScore,
    burstScore,
    lifecycle: lifecycleOf(counts, ageDays, burstScore),
    trajectoryConfidence,
    ageDays,
  };
}
