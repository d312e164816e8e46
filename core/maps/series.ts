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
  lifecycle: Lifecycle | null;
  trajectoryConfidence: 'high' | 'medium' | 'low';
  /** Days from the narrative's first activity (5th percentile of its posts) to as-of. */
  ageDays: number;
}

/** Daily counts of posts at `times` (ms) over the `days` days that end at `asOf`. */
export function dailyCounts(times: ArrayLike<number>, asOf: number, days: number): Float64Array {
  const c = new Float64Array(days);
  for (let i = 0; i < times.length; i++) {
    const back = Math.floor((asOf - times[i]!) / DAY_MS);
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

/**
 * Lifecycle from the shape of the smoothed series, first rule that applies:
 *   dormant    nothing (at most 2% of its posts) in the last 30 days of a window longer than that
 *   emerging   first activity within the last 21 days
 *   declining  peak 28+ days ago and the last 14 days at most half the peak level
 *   peaking    peak 3-21 days ago and the last 3 days below 85% of it
 *   growing    the last third of the active span at least 1.5x the first third
 *   steady     otherwise
 * Null for a window of under 14 days: too short to tell a shape.
 */
export function lifecycleOf(counts: Float64Array, ageDays: number): Lifecycle | null {
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
  if (ageDays <= 21) return 'emerging';
  const s = smooth(counts);
  let peak = 0;
  for (let i = 1; i < d; i++) if (s[i]! > s[peak]!) peak = i;
  const sincePeak = d - 1 - peak;
  const peakLevel = s[peak]!;
  if (sincePeak >= 28 && mean(counts, d - 14, d) <= 0.5 * peakLevel) return 'declining';
  if (sincePeak >= 3 && sincePeak <= 21 && mean(counts, d - 3, d) < 0.85 * peakLevel) return 'peaking';
  const start = Math.max(0, d - Math.ceil(ageDays));
  const span = d - start;
  const third = Math.max(1, Math.floor(span / 3));
  if (mean(counts, d - third, d) >= 1.5 * Math.max(mean(counts, start, start + third), 1e-9)) return 'growing';
  return 'steady';
}

/** Age of the first activity: the 5th percentile of the posts' ages, so one stray early post does not count. */
export function firstActivityAge(times: ArrayLike<number>, asOf: number): number {
  if (times.length === 0) return 0;
  // Ascending ages, natively sorted; the 5th percentile counted from the oldest.
  const ages = new Float64Array(times.length);
  for (let i = 0; i < times.length; i++) ages[i] = (asOf - times[i]!) / DAY_MS;
  ages.sort();
  return ages[ages.length - 1 - Math.floor(0.05 * (ages.length - 1))]!;
}

export function seriesStats(times: ArrayLike<number>, asOf: number, windowDays: number): SeriesStats {
  const days = Math.max(1, Math.ceil(windowDays));
  const counts = dailyCounts(times, asOf, days);
  const recentDays = Math.min(7, Math.floor(days / 2));
  const velocity = days >= 2 ? slope(counts, days - Math.min(7, days), days) : null;
  const acceleration = days >= 14 ? slope(counts, days - 7, days) - slope(counts, days - 14, days - 7) : null;
  const recentRate = mean(counts, days - recentDays, days);
  const earlierRate = mean(counts, 0, days - recentDays);
  const momentumScore = recentRate + earlierRate > 0 ? recentRate / (recentRate + earlierRate) : 0.5;
  const ageDays = firstActivityAge(times, asOf);
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
    lifecycle: lifecycleOf(counts, ageDays),
    trajectoryConfidence,
    ageDays,
  };
}
