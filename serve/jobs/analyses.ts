// What each job kind delivers (result shapes in the OpenAPI document and docs/jobs.md), built on
// the main thread from the rows a retrieval thread ranked. Long lists are built a slice at a time,
// yielding to the event loop between slices, so a 10,000-row job never holds up a search.
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { RankedRow } from '../../core/ranking/search.ts';
import { terms as analyzeTerms } from '../../core/text/analyzer.ts';
import { DAY_MS, type WindowKey } from '../../core/snapshots/windows.ts';
import { narrativeSentiment } from '../../core/maps/sentiment.ts';
import { seriesStats } from '../../core/maps/series.ts';
import { contentItem, creatorsOf } from '../generation/content-item.ts';
import { windowDaysOf, type LoadedGeneration } from '../generation/loaded-generation.ts';
import { trackedNarratives } from '../search/answer-narratives.ts';
import { searchPatterns } from '../search/answer-patterns.ts';
import type { JobRequest } from './job-request.ts';
import type { Summariser } from './summariser.ts';

/** Rows per slice between two turns of the event loop (about 5 ms of content items). */
const SLICE_ROWS = 500;
/** The tracked narratives a report lists at most (its "narratives"). */
const REPORT_NARRATIVES_MAX = 20;

/** A JSON array of f(item) for every item, stringified a slice at a time. */
async function jsonArrayInSlices<T>(items: readonly T[], f: (x: T) => unknown): Promise<string> {
  const parts: string[] = [];
  for (let i = 0; i < items.length; i += SLICE_ROWS) {
    const s = JSON.stringify(items.slice(i, i + SLICE_ROWS).map(f));
    parts.push(s.slice(1, -1));
    if (i + SLICE_ROWS < items.length) await nextTurn();
  }
  return `[${parts.filter(Boolean).join(',')}]`;
}

function header(gen: LoadedGeneration, r: JobRequest) {
  const b = gen.manifest.windows[r.window];
  return {
    kind: r.kind,
    query: r.query,
    window: r.window,
    window_start: b.start,
    window_end: b.end,
    generation: gen.id,
    computed_at: new Date().toISOString(),
  };
}

/** records: the content rows of docs/api.md "Content item", ranked, up to `limit`. Returns the result as JSON text. */
export async function recordsResult(gen: LoadedGeneration, r: JobRequest, ranked: readonly RankedRow[]): Promise<string> {
  const head = JSON.stringify({ ...header(gen, r), count: ranked.length });
  return `${head.slice(0, -1)},"content":${await jsonArrayInSlices(ranked, (x) => contentItem(gen, x))}}`;
}

/** The rows' daily series over the window (core/maps/series.ts) and each day's date. */
function dailySeries(gen: LoadedGeneration, window: WindowKey, rows: readonly number[]) {
  const { index } = gen;
  const series = seriesStats(
    rows.map((row) => index.publishedAt[row]!),
    index.asOfMs,
    windowDaysOf(gen, window),
  );
  const firstDay = index.asOfMs - series.days * DAY_MS;
  return { series, dayOf: (d: number) => new Date(firstDay + d * DAY_MS).toISOString().slice(0, 10) };
}

function countBy<K>(rows: readonly number[], key: (row: number) => K): Map<K, number> {
  const m = new Map<K, number>();
  for (const row of rows) {
    const k = key(row);
    m.set(k, (m.get(k) ?? 0) + 1);
  }
  return m;
}

/** Each key's count and share of n, most first (ties by key), as { [name]: key, count, share }. */
const shares = <K, N extends string>(m: Map<K, number>, n: number, name: N) =>
  [...m]
    .sort((a, b) => b[1] - a[1] || (String(a[0]) < String(b[0]) ? -1 : 1))
    .map(([k, count]) => ({ [name]: k, count, share: n ? count / n : 0 }) as Record<N, K> & { count: number; share: number });

function topOfLists<N extends string>(rows: readonly number[], listOf: (row: number) => string[], n: number, name: N) {
  const m = new Map<string, number>();
  for (const row of rows) for (const v of listOf(row)) m.set(v, (m.get(v) ?? 0) + 1);
  return shares(m, rows.length, name).slice(0, n);
}

/** Days whose count stands out from the days before it: z = (count - mean) / sd of the trailing 7 days, >= 3. */
const ANOMALY_Z = 3;
export function anomalies(counts: ArrayLike<number>, dayOf: (d: number) => string): Array<{ day: string; count: number; zScore: number }> {
  const out: Array<{ day: string; count: number; zScore: number }> = [];
  for (let d = 7; d < counts.length; d++) {
    let m = 0;
    for (let i = d - 7; i < d; i++) m += counts[i]!;
    m /= 7;
    let v = 0;
    for (let i = d - 7; i < d; i++) v += (counts[i]! - m) ** 2;
    const sd = Math.sqrt(v / 7);
    // A floor under sd so a quiet week (all zeros) does not make one post an anomaly.
    const z = (counts[d]! - m) / Math.max(sd, 1);
    if (z >= ANOMALY_Z) out.push({ day: dayOf(d), count: counts[d]!, zScore: z });
  }
  return out;
}

/** insights: an analysis of the rows (narratives, sentiment and stance, themes, creators, platforms, a daily series; signals on request; prose). */
export async function insightsResult(
  gen: LoadedGeneration,
  r: JobRequest,
  ranked: readonly RankedRow[],
  summariser: Summariser,
): Promise<string> {
  const { index, content } = gen;
  const rows = ranked.map((x) => x.row);
  const n = rows.length;
  const { series, dayOf } = dailySeries(gen, r.window, rows);
  const interactionsByDay = new Float64Array(series.days);
  for (const row of rows) {
    const back = Math.floor((index.asOfMs - index.publishedAt[row]!) / DAY_MS);
    if (back >= 0 && back < series.days) interactionsByDay[series.days - 1 - back]! += gen.members.interactions[row]!;
  }
  const feeling = narrativeSentiment(rows.map((row) => ({ tone: index.enrichment.toneOf(row), moods: index.enrichment.moods.get(row) })));
  const tones = countBy(rows, (row) => index.enrichment.toneOf(row) ?? 'unknown');
  const narratives = trackedNarratives(gen, r.window, rows).slice(0, REPORT_NARRATIVES_MAX);
  const platforms = shares(
    countBy(rows, (row) => content.platforms[content.platform[row]!] ?? 'unknown'),
    n,
    'platform',
  );
  const analysis = {
    ...header(gen, r),
    analysed: n,
    narratives,
    sentiment: {
      label: feeling.label,
      score: feeling.score,
      coverage: feeling.breakdown.coverage,
      dominant_tone: feeling.breakdown.dominant_tone,
      tones: shares(tones, n, 'tone'),
      stance: feeling.breakdown.stance,
      stance_coverage: feeling.breakdown.stance_coverage,
    },
    themes: topOfLists(rows, (row) => index.enrichment.themes.get(row), 15, 'theme'),
    tags: topOfLists(rows, (row) => content.tags.get(row), 15, 'tag'),
    top_creators: creatorsOf(gen, rows).slice(0, 10),
    platforms,
    time_series: Array.from(series.counts, (count, d) => ({ day: dayOf(d), count, engagement: interactionsByDay[d]! })),
    ...(r.includeSignals
      ? {
          signals: {
            velocity: series.velocity,
            acceleration: series.acceleration,
            momentum_score: series.momentumScore,
            emerging_score: series.emergingScore,
            lifecycle: series.lifecycle,
            trajectory_confidence: series.trajectoryConfidence,
            anomalies: anomalies(series.counts, dayOf),
          },
        }
      : {}),
  };
  const summary = await summariser.summarise(analysis);
  return JSON.stringify({ ...analysis, summary });
}

/** patterns: the visual patterns among the query's content, with their lookalikes (pattern entries, docs/api.md). */
export function patternsResult(gen: LoadedGeneration, r: JobRequest, ranked: readonly RankedRow[]): string {
  return JSON.stringify({
    ...header(gen, r),
    records_considered: ranked.length,
    patterns: searchPatterns(gen, r.window, analyzeTerms(r.query), ranked),
  });
}

/** The q-quantile (nearest rank) of sorted values. */
function quantile(sorted: Float64Array, q: number): number {
  return sorted.length ? sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]! : 0;
}

/** stats: counts by platform, content type and day; engagement percentiles; how spread the creators are. */
export function statsResult(gen: LoadedGeneration, r: JobRequest, ranked: readonly RankedRow[]): string {
  const { index, content } = gen;
  const rows = ranked.map((x) => x.row);
  const n = rows.length;
  const { series, dayOf } = dailySeries(gen, r.window, rows);
  const percentiles = (value: (row: number) => number) => {
    const v = Float64Array.from(rows, value).sort();
    return {
      p50: quantile(v, 0.5),
      p90: quantile(v, 0.9),
      p99: quantile(v, 0.99),
      max: n ? v[n - 1]! : 0,
      mean: n ? v.reduce((a, x) => a + x, 0) / n : 0,
    };
  };
  const creators = creatorsOf(gen, rows);
  const withCreator = creators.reduce((a, c) => a + c.hits, 0);
  const top10 = creators.slice(0, 10).reduce((a, c) => a + c.hits, 0);
  // Gini of posts per creator (0: every creator posted as much; towards 1: a few posted most).
  const hits = creators.map((c) => c.hits).sort((a, b) => a - b);
  const gini = hits.length ? hits.reduce((a, h, i) => a + (2 * (i + 1) - hits.length - 1) * h, 0) / (hits.length * withCreator) : 0;
  return JSON.stringify({
    ...header(gen, r),
    records: n,
    by_platform: shares(
      countBy(rows, (row) => content.platforms[content.platform[row]!] ?? 'unknown'),
      n,
      'platform',
    ),
    by_content_type: shares(
      countBy(rows, (row) => content.contentTypes[content.contentType[row]!] ?? 'unknown'),
      n,
      'contentType',
    ),
    by_day: Array.from(series.counts, (count, d) => ({ day: dayOf(d), count })),
    engagement: {
      interactions: percentiles((row) => gen.members.interactions[row]!),
      likes: percentiles((row) => index.likes[row]!),
      comments: percentiles((row) => index.comments[row]!),
      shares: percentiles((row) => index.shares[row]!),
      views: percentiles((row) => index.views[row]! || 0),
    },
    creators: {
      distinct: creators.length,
      records_with_creator: withCreator,
      top_creator_share: withCreator ? (creators[0]?.hits ?? 0) / withCreator : 0,
      top10_share: withCreator ? top10 / withCreator : 0,
      posts_per_creator_gini: gini,
    },
  });
}
