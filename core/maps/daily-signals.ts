// What a reader looks for first in a narrative's daily series (docs/fields.md, "Daily signals"):
// its change against the previous period, and the days that spike. One definition, read by the
// free narrative reads and shown as-is by the dashboard.
import { median } from './series.ts';

/** Days in a period: a week, or half the series when it is shorter than two weeks. */
const CHANGE_PERIOD_DAYS = 7;

interface PeriodChange {
  /** Days in each period. */
  days: number;
  /** Posts in the last `days` days of the series. */
  current: number;
  /** Posts in the `days` days before those. */
  previous: number;
  /** (current - previous) / previous; null when previous is 0 (nothing to compare with). */
  ratio: number | null;
}

/** The last period's posts against the period before it; days = min(7, floor(length / 2)). */
export function periodChange(daily: ArrayLike<number>): PeriodChange {
  const n = daily.length;
  const days = Math.min(CHANGE_PERIOD_DAYS, Math.floor(n / 2));
  let current = 0;
  let previous = 0;
  for (let i = n - days; i < n; i++) current += daily[i]!;
  for (let i = n - 2 * days; i < n - days; i++) previous += daily[i]!;
  return { days, current, previous, ratio: previous > 0 ? (current - previous) / previous : null };
}

/** A spike is judged against at most this many days before it; with this many, by its robust z-score. */
const SPIKE_BASELINE_DAYS = 14;
const SPIKE_MIN_BASELINE_DAYS = 7;
/** Robust z-score a day must exceed: (count - median) / max(1, 1.4826 x MAD). */
const SPIKE_Z = 3.5;
/** And at least this many posts (a day of 3 after a silent fortnight is not a story). */
const SPIKE_MIN_POSTS = 5;
/**
 * A young series (fewer than 7 days before the day, at least 2): a day spikes when it has at
 * least SPIKE_MIN_POSTS posts and SPIKE_BURST_RATIO x (the mean of the days before + 1). A new
 * story's first burst (0, 0, 0, 9, 25) is the spike a reader looks for; a median and MAD of three
 * days say nothing, so the rule is a plain ratio over them (the + 1 keeps 0 -> 1 from counting).
 */
const SPIKE_MIN_BURST_BASELINE_DAYS = 2;
const SPIKE_BURST_RATIO = 4;

/**
 * Which days spike (docs/fields.md, "Daily signals"): a day of at least SPIKE_MIN_POSTS posts
 * that, with 7 to 14 days before it, has a robust z-score over them (median and median absolute
 * deviation, so one earlier spike does not hide the next) above SPIKE_Z; with 2 to 6 days before
 * it (a young series, a 7-day window), is at least SPIKE_BURST_RATIO x (their mean + 1). The
 * first 2 days have no baseline and never spike.
 */
export function spikeDays(daily: ArrayLike<number>): boolean[] {
  const out: boolean[] = [];
  for (let i = 0; i < daily.length; i++) {
    const count = daily[i]!;
    const from = Math.max(0, i - SPIKE_BASELINE_DAYS);
    const days = i - from;
    if (days < SPIKE_MIN_BURST_BASELINE_DAYS || count < SPIKE_MIN_POSTS) {
      out.push(false);
      continue;
    }
    const base = Array.from({ length: days }, (_, k) => daily[from + k]!);
    if (days < SPIKE_MIN_BASELINE_DAYS) {
      const mean = base.reduce((a, b) => a + b, 0) / days;
      out.push(count >= SPIKE_BURST_RATIO * (mean + 1));
      continue;
    }
    const med = median(base);
    const mad = median(base.map((x) => Math.abs(x - med)));
    out.push((count - med) / Math.max(1, 1.4826 * mad) > SPIKE_Z);
  }
  return out;
}

/** Whether the newest day of the series spikes (spikeDays' last value, read off the days it looks at only). */
export function lastDaySpikes(daily: ArrayLike<number>): boolean {
  const n = daily.length;
  if (n === 0) return false;
  const tail = Array.from({ length: Math.min(n, SPIKE_BASELINE_DAYS + 1) }, (_, k) => daily[n - Math.min(n, SPIKE_BASELINE_DAYS + 1) + k]!);
  return spikeDays(tail)[tail.length - 1]!;
}
