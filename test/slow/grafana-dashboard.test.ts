// docs/grafana-dashboard.json against a real server: a dashboard Grafana can load (its shape, a grid
// without overlaps, the Prometheus data source as the DS_PROMETHEUS variable), and every metric its
// panels and variables query exported by the server's /metrics on 127.0.0.1 (a histogram through its
// _bucket, _sum and _count series), with the labels they filter and group on; and every ci_ family
// the server exports on some panel, so a new metric is not left off the dashboard.
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { RunningServer } from '../../serve/server.ts';
import { ROOT } from '../helpers/child.ts';
import { callApi } from '../helpers/http.ts';
import { pipedSampleDir } from '../helpers/pipeline.ts';
import { scrape, type Scrape } from '../helpers/prometheus.ts';
import { testServer } from '../helpers/server.ts';
import { cleanupTmp } from '../helpers/tmp.ts';

interface Target {
  refId: string;
  expr: string;
  datasource?: { type: string; uid: string };
}
interface Panel {
  id: number;
  type: string;
  title: string;
  gridPos: { h: number; w: number; x: number; y: number };
  datasource?: { type: string; uid: string };
  targets?: Target[];
}
interface Dashboard {
  title: string;
  uid: string;
  schemaVersion: number;
  panels: Panel[];
  templating: { list: Array<{ name: string; type: string; query: string | { query: string } }> };
}

const dashboard = JSON.parse(fs.readFileSync(path.join(ROOT, 'docs', 'grafana-dashboard.json'), 'utf8')) as Dashboard;
const DATASOURCE = { type: 'prometheus', uid: '${DS_PROMETHEUS}' };
/** Labels Prometheus adds to every series it scrapes, and the bucket bound of a histogram. */
const ADDED_LABELS = new Set(['instance', 'job', 'le']);
const HISTOGRAM_SERIES = /_(bucket|sum|count)$/;

let s: RunningServer;
let m: Scrape;
/** Each family /metrics exports (its `# TYPE` line: written with or without samples), by name. */
let families: Map<string, string>;

test.before(async () => {
  const dir = await pipedSampleDir();
  s = await testServer(dir);
  // A search and a missing route: the request metrics have series, with their labels.
  await callApi(s.baseUrl, s.demo.secret, 'POST', '/search', { body: { query: 'coffee', limit: 5, window: 'all' } });
  await callApi(s.baseUrl, s.demo.secret, 'GET', '/no/such/route');
  m = await scrape(s.baseUrl);
  families = new Map([...m.text.matchAll(/^# TYPE (\S+) (\S+)$/gm)].map((x) => [x[1]!, x[2]!]));
});

test.after(async () => {
  await s?.close();
  cleanupTmp();
});

/** Every PromQL expression of the dashboard: its panels' targets and its query variables. */
function expressions(d: Dashboard): string[] {
  const vars = d.templating.list.filter((v) => v.type === 'query').map((v) => (typeof v.query === 'string' ? v.query : v.query.query));
  return [...d.panels.flatMap((p) => (p.targets ?? []).map((t) => t.expr)), ...vars];
}

/** The expression with its quoted strings emptied: label values and regexes name no metric. */
const unquoted = (expr: string) => expr.replace(/"(?:[^"\\]|\\.)*"/g, '""');

/** The metric names an expression reads (the service's, and prom-client's process and Node ones). */
const metricNames = (expr: string) => [...unquoted(expr).matchAll(/\b((?:ci|process|nodejs)_[a-z0-9_]+)\b/g)].map((x) => x[1]!);

/** The family a series name belongs to, or why it is not exported: a histogram is read through its _bucket, _sum and _count. */
function familyOf(name: string, exported: Map<string, string>): { family: string } | { missing: string } {
  const type = exported.get(name);
  if (type === 'histogram') return { missing: `${name} (a histogram: query ${name}_bucket, _sum or _count)` };
  if (type) return { family: name };
  const base = name.replace(HISTOGRAM_SERIES, '');
  if (base !== name && exported.get(base) === 'histogram') return { family: base };
  return { missing: name };
}

/** The label names of a family's series in the scrape; null when it has none (nothing to check against). */
function labelsOf(family: string): Set<string> | null {
  const data = (m.metrics[family]?.data ?? []) as Array<{ labels: Record<string, string> }>;
  return data.length ? new Set(data.flatMap((d) => Object.keys(d.labels))) : null;
}

/** The labels an expression filters on (`name{label="..."}`) or groups by (`by (a, b)`), each with the families it must be on. */
function labelUses(expr: string, exported: Map<string, string>): Array<{ label: string; families: string[] }> {
  const plain = unquoted(expr);
  const uses: Array<{ label: string; families: string[] }> = [];
  for (const sel of plain.matchAll(/\b([a-z_][a-z0-9_]*)\{([^}]*)\}/g)) {
    const f = familyOf(sel[1]!, exported);
    if (!('family' in f)) continue;
    for (const matcher of sel[2]!.matchAll(/([a-zA-Z_]\w*)\s*(?:=~|!~|!=|=)/g)) uses.push({ label: matcher[1]!, families: [f.family] });
  }
  const named = metricNames(expr).flatMap((n) => {
    const f = familyOf(n, exported);
    return 'family' in f ? [f.family] : [];
  });
  for (const by of plain.matchAll(/\bby\s*\(([^)]*)\)/g))
    for (const label of by[1]!.split(',').map((l) => l.trim())) if (label) uses.push({ label, families: named });
  return uses;
}

/** What a dashboard queries that /metrics does not export: unknown series, and labels none of the series they filter carries. */
function notExported(d: Dashboard, exported: Map<string, string>): string[] {
  const wrong: string[] = [];
  for (const expr of expressions(d)) {
    for (const name of metricNames(expr)) {
      const f = familyOf(name, exported);
      if ('missing' in f) wrong.push(f.missing);
    }
    for (const { label, families: fams } of labelUses(expr, exported)) {
      if (ADDED_LABELS.has(label)) continue;
      const known = fams.map(labelsOf).filter((l): l is Set<string> => l !== null);
      if (known.length && !known.some((l) => l.has(label))) wrong.push(`label ${label} of ${fams.join(', ')}`);
    }
  }
  return [...new Set(wrong)];
}

test('a dashboard Grafana loads: title, uid, schema version, panels with a type, title, place on the grid and queries', () => {
  assert.type(dashboard.title, 'string');
  assert.ok(dashboard.title.length > 0);
  assert.match(dashboard.uid, /^[A-Za-z0-9_-]{1,40}$/);
  assert.ok(dashboard.schemaVersion >= 36 && dashboard.schemaVersion <= 41, `schemaVersion ${dashboard.schemaVersion}`);
  const ds = dashboard.templating.list.find((v) => v.name === 'DS_PROMETHEUS');
  assert.equal([ds?.type, ds?.query], ['datasource', 'prometheus'], 'the Prometheus data source is the DS_PROMETHEUS variable');
  assert.ok(Array.isArray(dashboard.panels) && dashboard.panels.length > 10);
  assert.is(new Set(dashboard.panels.map((p) => p.id)).size, dashboard.panels.length, 'panel ids are unique');
  const taken = new Set<string>();
  for (const p of dashboard.panels) {
    assert.ok(['row', 'timeseries', 'stat'].includes(p.type), `${p.title}: type ${p.type}`);
    assert.ok(typeof p.title === 'string' && p.title.length > 0, `panel ${p.id} has a title`);
    const g = p.gridPos;
    assert.ok([g.h, g.w, g.x, g.y].every(Number.isInteger) && g.w >= 1 && g.h >= 1 && g.x >= 0 && g.x + g.w <= 24, `${p.title}: gridPos`);
    for (let y = g.y; y < g.y + g.h; y++)
      for (let x = g.x; x < g.x + g.w; x++) {
        assert.not.ok(taken.has(`${x},${y}`), `${p.title} overlaps another panel at ${x},${y}`);
        taken.add(`${x},${y}`);
      }
    // A row only heads the panels below it; every other panel queries Prometheus.
    if (p.type === 'row') continue;
    assert.equal(p.datasource, DATASOURCE, p.title);
    assert.ok(p.targets && p.targets.length > 0, `${p.title} has targets`);
    assert.is(new Set(p.targets.map((t) => t.refId)).size, p.targets.length, `${p.title}: refIds unique`);
    for (const t of p.targets) {
      assert.equal(t.datasource, DATASOURCE, `${p.title} ${t.refId}`);
      assert.ok(typeof t.expr === 'string' && t.expr.trim().length > 0, `${p.title} ${t.refId} has an expr`);
    }
  }
});

test('every expression is balanced: brackets, braces and parentheses closed in order, quotes closed', () => {
  const pairs: Record<string, string> = { ')': '(', ']': '[', '}': '{' };
  for (const expr of expressions(dashboard)) {
    const plain = unquoted(expr).replaceAll('""', '');
    assert.not.ok(plain.includes('"'), `an unclosed quote: ${expr}`);
    const open: string[] = [];
    for (const c of plain)
      if ('([{'.includes(c)) open.push(c);
      else if (c in pairs) assert.is(open.pop(), pairs[c], `unbalanced ${c}: ${expr}`);
    assert.equal(open, [], `unclosed: ${expr}`);
  }
});

test("every metric the dashboard queries is exported by the server's /metrics, with the labels it filters and groups on", () => {
  const used = new Set(expressions(dashboard).flatMap(metricNames));
  assert.ok(used.size >= 30, `${used.size} metrics named`);
  for (const name of ['ci_http_request_duration_seconds_bucket', 'ci_webhook_outbox_events', 'ci_alert_watches', 'ci_build_info'])
    assert.ok(used.has(name), name);
  assert.equal(notExported(dashboard, families), []);
});

test('the check finds a metric the server does not export, a bare histogram name and a label its series lack', () => {
  const bad = (expr: string): Dashboard => ({
    ...dashboard,
    templating: { list: [] },
    panels: [{ ...dashboard.panels[1]!, targets: [{ refId: 'A', expr }] }],
  });
  assert.equal(notExported(bad('sum(rate(ci_no_such_metric_total[5m]))'), families), ['ci_no_such_metric_total']);
  assert.equal(notExported(bad('rate(ci_http_request_duration_seconds[5m])'), families), [
    'ci_http_request_duration_seconds (a histogram: query ci_http_request_duration_seconds_bucket, _sum or _count)',
  ]);
  assert.equal(
    notExported(bad('sum(ci_webhook_outbox_events_count)'), families),
    ['ci_webhook_outbox_events_count'],
    'a gauge has no _count',
  );
  assert.equal(notExported(bad('sum(ci_http_requests_total{account="a"})'), families), ['label account of ci_http_requests_total']);
  assert.equal(notExported(bad('sum by (stage) (ci_jobs)'), families), ['label stage of ci_jobs']);
});

test('every ci_ family the server exports is on some panel', () => {
  const shown = new Set(
    expressions(dashboard)
      .flatMap(metricNames)
      .map((n) => familyOf(n, families))
      .flatMap((f) => ('family' in f ? [f.family] : [])),
  );
  const service = [...families.keys()].filter((n) => n.startsWith('ci_'));
  assert.ok(service.length >= 30, `${service.length} families`);
  assert.equal(
    service.filter((n) => !shown.has(n)),
    [],
  );
});

test.run();
