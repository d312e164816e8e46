// When a window's narratives are told, for the theme grouping (core/clustering/themes.ts,
// pipeline/narratives/themes/build.ts; docs/fields.md, "Themes"): narratives of one event burst at the same
// hours whatever language or angle they are told in, while everyday talk is spread over the window
// as the window's own posts are. Per narrative of n posts, over 6-hour bins of the window, its
// counts and the window's, each smoothed over the bin and its two neighbours (weights 1, 2, 1):
//   level     λ = the median over the bins where the window has posts of s(b) / (n q(b))
//             (s: its smoothed counts, q(b): the window's share of posts in bin b)
//   expected  μ(b) = λ n q(b): the window's profile at the narrative's typical level
//   excess    e(b) = max(0, s(b) − μ(b) − 2√μ(b) − 2): what rises beyond the window's rhythm and
//             chance (a bin must hold 2 posts and 2 Poisson deviations more than expected)
//   burst     min(1, Σ_b e(b) / n): the share of its posts beyond them
//   weight    β = BURST.share x (1 + burst) / 2 (its time part zero when e is zero everywhere)
// The excess, not the counts: two narratives flat over the window have alike counts at coarse
// bins, while their excesses are chance, below the allowance, so zero: everyday talk's time part
// is zero and joins no theme by its hours (its weight kept: its words count as much as before).
// Two that rise at the same hours have alike excesses. (The raw excess above μ, with no
// allowance, made small narratives of one week alike whenever both had posts in its last days:
// the user trial's 19-post ferry strike joined a 25-post "park, view, rock".)
// The level, not n q(b) alone: where a large crisis fills the window's profile, an everyday
// narrative stands above that profile everywhere but the crisis's hours, and all everyday
// narratives would look alike (and bursty) by their excess over it; scaled to its median, such a
// narrative's excess is chance again. A narrative mostly outside the window's busy bins (a crisis
// in a long window) has λ = 0: its excess is its own profile.

export const BURST = {
  /** Bin width in hours. */
  binHours: 6,
  /** Noise allowance of a burst bin: z standard deviations (Poisson, √μ) and a floor of posts. */
  noiseZ: 2,
  noiseFloor: 2,
  /** The time part's share of a theme vector's cosine for the most bursty narrative (half that for one barely above chance). */
  share: 0.35,
} as const;

const HOUR_MS = 3_600_000;

interface BurstProfile {
  /** e(b) per bin of the window (zeros when the narrative rises nowhere above the window). */
  excess: Float64Array;
  /** Share of its posts beyond the window's rhythm and chance, 0 … 1. */
  burst: number;
  /** β: the share of the theme vector's cosine its time part carries. */
  weight: number;
}

/** Counts of `times` in `bins` bins of `width` ms from `start` (times outside clamp to the end bins), smoothed 1, 2, 1. */
function smoothedCounts(times: ArrayLike<number>, start: number, width: number, bins: number): Float64Array {
  const c = new Float64Array(bins);
  for (let i = 0; i < times.length; i++) c[Math.min(bins - 1, Math.max(0, Math.floor((times[i]! - start) / width)))]!++;
  const s = new Float64Array(bins);
  for (let b = 0; b < bins; b++) s[b] = (2 * c[b]! + (b > 0 ? c[b - 1]! : 0) + (b + 1 < bins ? c[b + 1]! : 0)) / 4;
  return s;
}

/**
 * Each group's profile against the window's: `windowTimes` are the published times (ms) of the
 * window's posts, `groups` each narrative's members' times, [start, end] the window's bounds.
 */
export function burstProfiles(
  windowTimes: ArrayLike<number>,
  groups: ReadonlyArray<ArrayLike<number>>,
  start: number,
  end: number,
): BurstProfile[] {
  const width = BURST.binHours * HOUR_MS;
  const bins = Math.max(1, Math.floor((end - start) / width) + 1);
  const q = smoothedCounts(windowTimes, start, width, bins);
  const total = windowTimes.length || 1;
  const ratios: number[] = [];
  return groups.map((times) => {
    const n = times.length;
    if (n === 0) return { excess: new Float64Array(bins), burst: 0, weight: 0 };
    const s = smoothedCounts(times, start, width, bins);
    // λ: the narrative's typical level against the window's, the median of s(b) / (n q(b)) over the
    // bins where the window has posts.
    ratios.length = 0;
    for (let b = 0; b < bins; b++) if (q[b]! > 0) ratios.push((s[b]! * total) / (n * q[b]!));
    ratios.sort((x, y) => x - y);
    const level = ratios.length ? ratios[ratios.length >> 1]! : 0;
    const excess = new Float64Array(bins);
    let beyond = 0;
    for (let b = 0; b < bins; b++) {
      const mu = (level * n * q[b]!) / total;
      excess[b] = Math.max(0, s[b]! - mu - BURST.noiseZ * Math.sqrt(mu) - BURST.noiseFloor);
      beyond += excess[b]!;
    }
    const burst = Math.min(1, beyond / n);
    return { excess, burst, weight: (BURST.share * (1 + burst)) / 2 };
  });
}
