// A scrape of GET {base_url}/metrics read with a Prometheus text-format parser (prom2javascript),
// and look-ups of one series by its labels. prom2javascript reads labelled histograms (which
// parse-prometheus-text-format folds into one series) but knows no NaN, which the format allows
// and prom-client writes ("Nan", read by Prometheus case-insensitively) for the event-loop lag
// statistics when no sample fell between two scrapes: those lines are set aside, by name, in
// `nan` for the caller to check.
import { getMetricsFromIterator, type PromData, type PromHistogramData, type PromMetrics } from 'prom2javascript';

export interface Scrape {
  text: string;
  metrics: PromMetrics;
  /** The series whose value was NaN (left out of `metrics`). */
  nan: string[];
}

const NAN_SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{.*\})?\s+nan$/i;

export async function scrape(baseUrl: string, token?: string): Promise<Scrape> {
  const res = await fetch(`${baseUrl}/metrics`, { headers: token ? { authorization: `Bearer ${token}` } : {} });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`GET /metrics: ${res.status} ${text}`);
  const nan: string[] = [];
  const lines = text.split('\n').filter((line) => {
    const m = NAN_SAMPLE.exec(line);
    if (m) nan.push(m[1]!);
    return !m;
  });
  return { text, metrics: await getMetricsFromIterator(lines[Symbol.iterator]()), nan };
}

const matches = (have: Record<string, string>, want: Record<string, string>) => Object.entries(want).every(([k, v]) => have[k] === v);

/** The series of `name` whose labels include `labels` (at most one may: an ambiguous look-up is an error). */
function series<T extends { labels: Record<string, string> }>(s: Scrape, name: string, labels: Record<string, string>): T | null {
  const found = ((s.metrics[name]?.data ?? []) as unknown as T[]).filter((d) => matches(d.labels, labels));
  if (found.length > 1) throw new Error(`${name} ${JSON.stringify(labels)} names ${found.length} series`);
  return found[0] ?? null;
}

/** A counter's or gauge's value; 0 for a series not exported (yet). */
export function valueOf(s: Scrape, name: string, labels: Record<string, string> = {}): number {
  return series<PromData>(s, name, labels)?.value ?? 0;
}

/** Whether the series is exported at all. */
export function has(s: Scrape, name: string, labels: Record<string, string> = {}): boolean {
  return series(s, name, labels) !== null;
}

/** A histogram's series (buckets by `le`, count, sum); an empty one when not exported (yet). */
export function histogramOf(s: Scrape, name: string, labels: Record<string, string> = {}): PromHistogramData {
  return series<PromHistogramData>(s, name, labels) ?? { labels, buckets: {}, count: 0, sum: 0 };
}
