// GET {base_url}/metrics on a real server over a published generation, read with a Prometheus
// text-format parser: who may scrape (loopback only; ADMIN_TOKEN's bearer when set), and the
// figures moving by exactly what the requests did (requests by route and status, latency
// histograms, credits held, charged and released, job runs, the answer cache, the generation,
// the last pipeline run, alert evaluations and webhook deliveries, and the alerts' backlog as the
// outbox and the watch store hold it).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { loadConfig } from '../../core/infra/config.ts';
import { dataDirLayout } from '../../core/infra/data-dir.ts';
import { readCurrent } from '../../core/snapshots/generations.ts';
import { createLogger } from '../../core/infra/log.ts';
import { readLastRun } from '../../core/infra/pipeline-run.ts';
import { pollUntil } from '../../core/infra/wait-at-most.ts';
import { resolveStages, runStages, type RunResult } from '../../pipeline/run/runner.ts';
import type { RunningServer } from '../../serve/server.ts';
import { callApi } from '../helpers/http.ts';
import { AS_OF, runPipeline, sampleDataDir, summaryOf } from '../helpers/pipeline.ts';
import { has, histogramOf, scrape, valueOf, type Scrape } from '../helpers/prometheus.ts';
import { testServer } from '../helpers/server.ts';
import { ledgerEnv, stopPostgres } from '../helpers/postgres.ts';
import { cleanupTmp, tmpDir, writeLines } from '../helpers/tmp.ts';
import { eventFor, startReceiver, watchFor } from '../helpers/alerts.ts';
import type { Watch } from '../../serve/alerts/alert-model.ts';
import { NEW_WORD_STORIES, storyPosts } from '../../fixtures/new-word-stories.ts';

const TOKEN = 'adm_metrics_test_token';

let s: RunningServer;
/** A second server on a copy of the data directory, on every interface and without ADMIN_TOKEN. */
let open: RunningServer;
let dir: string;
let openDir: string;
let run: RunResult;

const call = (method: string, p: string, body?: unknown, key?: string) => callApi(s.baseUrl, s.demo.secret, method, p, { body, key });
const metrics = () => scrape(s.baseUrl, TOKEN);
const delta = (a: Scrape, b: Scrape, name: string, labels: Record<string, string> = {}) =>
  valueOf(b, name, labels) - valueOf(a, name, labels);
const near = (a: number, b: number, what: string) => assert.ok(Math.abs(a - b) < 1e-9, `${what}: ${a} against ${b}`);

test.before(async () => {
  dir = sampleDataDir();
  // Three records ingest refuses, each for another reason.
  fs.writeFileSync(
    path.join(dir, 'landing', 'bad.ndjson'),
    ['{"platform":"x","published_at":"2026-10-01T00:00:00Z"}', '{"uuid":"b1","platform":"x","published_at":"yesterday"}', '{not json'].join(
      '\n',
    ) + '\n',
  );
  run = await runPipeline(dir);
  // Copied before either server made its ledger: each server has a data directory (and ledger) of its own.
  openDir = tmpDir();
  fs.cpSync(dir, openDir, { recursive: true });
  // TEST_LEDGER=postgres: the ledger, the job queue (pg-boss) and the alerts in PostgreSQL, like serve.test.ts.
  // Webhooks may go to 127.0.0.1: the backlog test's receivers listen there.
  s = await testServer(dir, { ...(await ledgerEnv()), ADMIN_TOKEN: TOKEN, DEMO_CREDITS: '100', ALERTS_ALLOW_PRIVATE: '1' });
  open = await testServer(openDir, { HOST: '0.0.0.0' });
});

test.after(async () => {
  await s?.close();
  await open?.close();
  await stopPostgres();
  cleanupTmp();
});

test('a loopback caller with the ADMIN_TOKEN gets the text format; no token or a wrong one: 401; no key, token or account in it', async () => {
  for (const authorization of ['', `Bearer ${TOKEN}x`, `Bearer ${TOKEN.slice(0, -1)}`, TOKEN, `Basic ${TOKEN}`]) {
    const r = await fetch(`${s.baseUrl}/metrics`, { headers: authorization ? { authorization } : {} });
    assert.is(r.status, 401, authorization);
    assert.is(r.headers.get('www-authenticate'), 'Bearer realm="metrics"');
    const body = (await r.json()) as { error: string; request_id: string };
    assert.is(body.error, 'metrics token required (Authorization: Bearer <ADMIN_TOKEN>)');
    assert.match(body.request_id, /^req_/);
  }
  // An API key is not a metrics credential.
  assert.is((await fetch(`${s.baseUrl}/metrics`, { headers: { 'x-api-key': s.demo.secret } })).status, 401);

  const r = await fetch(`${s.baseUrl}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } });
  assert.is(r.status, 200);
  assert.is(r.headers.get('content-type'), 'text/plain; version=0.0.4; charset=utf-8');
  await call('POST', '/search', { query: 'coffee', limit: 5, window: 'all' });
  const m = await metrics();
  // Node's process metrics, on this server's registry.
  assert.ok(valueOf(m, 'process_cpu_seconds_total') > 0);
  assert.ok(valueOf(m, 'nodejs_heap_size_used_bytes') > 0);
  for (const secret of [s.demo.secret, s.demo.account, TOKEN])
    assert.not.ok(m.text.includes(secret), 'a secret or an account in the metrics');
  // NaN only where prom-client writes it for an event-loop lag statistic with no sample since the last scrape.
  for (const name of m.nan) assert.match(name, /^nodejs_eventloop_lag_/);
});

test('off loopback the endpoint is a 404, token or not; without ADMIN_TOKEN loopback alone is let in', async () => {
  const port = new URL(open.url).port;
  const prefix = new URL(open.baseUrl).pathname;
  const loopback = await fetch(`http://127.0.0.1:${port}${prefix}/metrics`);
  assert.is(loopback.status, 200, 'no ADMIN_TOKEN: a loopback caller needs none');
  assert.match(await loopback.text(), /^# HELP /m);
  // The same machine reached on its network address: the server sees that address, not loopback.
  const lan = Object.values(os.networkInterfaces())
    .flat()
    .find((a) => a && a.family === 'IPv4' && !a.internal);
  if (!lan) {
    console.warn('metrics.test: no non-loopback IPv4 address on this machine; the off-loopback refusal is not checked');
    return;
  }
  for (const headers of [{}, { authorization: `Bearer ${TOKEN}` }] as Array<Record<string, string>>) {
    const r = await fetch(`http://${lan.address}:${port}${prefix}/metrics`, { headers });
    assert.is(r.status, 404);
    assert.is(((await r.json()) as { error: string }).error, `no route GET ${prefix}/metrics`);
  }
});

/** Submit a job and poll its status until it is done (bounded); counts the polls. */
let polls = 0;
async function runJob(body: unknown): Promise<{ status: string; charged: number; estimated_cost: number }> {
  const submit = await call('POST', '/intelligence/jobs', body);
  assert.is(submit.status, 202, JSON.stringify(submit.json));
  let job = submit.json;
  await pollUntil(
    'the job to finish',
    async () => {
      polls++;
      job = (await call('GET', `/intelligence/jobs/${submit.json.jobId}`)).json;
      return job.status === 'succeeded' || job.status === 'failed';
    },
    30_000,
  );
  return job;
}

test('the figures move by exactly what the requests did', async () => {
  const poor = await s.ledger.createAccount('poor');
  const poorKey = (await s.ledger.createKey(poor.id)).secret;
  const before = await metrics();

  let charged = 0;
  const queries = ['coffee', 'sourdough starter', 'marathon training', 'coffee'];
  for (const query of queries) {
    const r = await call('POST', '/search', { query, limit: 10, window: 'all' });
    assert.is(r.status, 200, JSON.stringify(r.json));
    charged += Number(r.headers.get('x-service-credits-used'));
  }
  assert.ok(charged > 0);
  assert.is((await call('POST', '/search', { query: 'coffee', limit: 10, window: 'all' }, poorKey)).status, 402);
  assert.is((await call('GET', '/narratives/no-such-narrative')).status, 404);
  assert.is((await call('GET', '/no/such/route')).status, 404);
  for (const p of ['/narratives/trending', '/themes', '/intelligence/patterns']) assert.is((await call('GET', p)).status, 200, p);
  const stats = await runJob({ kind: 'stats', query: 'coffee', window: 'all' });
  assert.is(stats.status, 'succeeded');
  charged += stats.charged;
  // The sample has fewer than 1,500 posts: signals cannot be given, the job fails and its hold is released whole.
  const failed = await runJob({ kind: 'insights', query: 'coffee', window: 'all', includeSignals: true });
  assert.is(failed.status, 'failed');
  assert.is(failed.charged, 0);
  // The queue lets the job go just after its record says it succeeded (pg-boss: one more write).
  await pollUntil(
    'the job queue to be empty',
    async () => {
      const m = await metrics();
      return has(m, 'ci_jobs', { state: 'queued' }) && valueOf(m, 'ci_jobs', { state: 'running' }) === 0;
    },
    10_000,
  );
  const after = await metrics();

  const requests = (method: string, route: string, status: number) =>
    delta(before, after, 'ci_http_requests_total', { method, route, status: String(status) });
  assert.is(requests('POST', '/search', 200), 4);
  assert.is(requests('POST', '/search', 402), 1);
  assert.is(requests('GET', '/narratives/:id', 404), 1);
  assert.is(requests('GET', 'unmatched', 404), 1);
  for (const route of ['/narratives/trending', '/themes', '/intelligence/patterns']) assert.is(requests('GET', route, 200), 1, route);
  assert.is(requests('POST', '/intelligence/jobs', 202), 2);
  assert.is(requests('GET', '/intelligence/jobs/:id', 200), polls);
  assert.not.ok(
    after.metrics.ci_http_requests_total!.data.some((d) => d.labels.route?.includes('metrics') || d.labels.route?.includes('no-such')),
    'scrapes are not requests; raw paths are not routes',
  );

  const searches = histogramOf(after, 'ci_http_request_duration_seconds', { method: 'POST', route: '/search' });
  const searchesBefore = histogramOf(before, 'ci_http_request_duration_seconds', { method: 'POST', route: '/search' });
  assert.is(searches.count - searchesBefore.count, 5);
  assert.is(searches.buckets['+Inf'], searches.count);
  const les = Object.keys(searches.buckets).sort((a, b) => Number(a) - Number(b));
  for (let i = 1; i < les.length; i++) assert.ok(searches.buckets[les[i]!]! >= searches.buckets[les[i - 1]!]!, 'cumulative buckets');
  assert.ok(searches.sum! > searchesBefore.sum!);
  const runs = (kind: string, outcome: string) =>
    histogramOf(after, 'ci_job_run_duration_seconds', { kind, outcome }).count -
    histogramOf(before, 'ci_job_run_duration_seconds', { kind, outcome }).count;
  assert.is(runs('stats', 'succeeded'), 1);
  assert.is(runs('insights', 'failed'), 1);

  near(delta(before, after, 'ci_credits_charged_total'), charged, 'charged = the searches and the job as their answers said');
  assert.is(delta(before, after, 'ci_credit_holds_total', { outcome: 'placed' }), 6);
  assert.is(delta(before, after, 'ci_credit_holds_total', { outcome: 'refused' }), 1);
  const released =
    delta(before, after, 'ci_credits_released_total', { reason: 'unused' }) +
    delta(before, after, 'ci_credits_released_total', { reason: 'refund' });
  near(delta(before, after, 'ci_credits_held_total'), charged + released, 'every credit held was charged or released');
  near(
    delta(before, after, 'ci_credits_released_total', { reason: 'refund' }),
    failed.estimated_cost,
    "the failed job's hold, refunded whole",
  );
  assert.is(valueOf(after, 'ci_credit_holds_open'), (await s.ledger.openHolds()).length);
  assert.is(valueOf(after, 'ci_credit_holds_open'), 0);

  assert.is(delta(before, after, 'ci_answer_cache_hits_total'), 1, 'the repeated search');
  assert.is(delta(before, after, 'ci_answer_cache_misses_total'), 3);
  assert.ok(has(after, 'ci_jobs', { state: 'queued' }) && has(after, 'ci_jobs', { state: 'running' }), 'the queue depth is exported');
  assert.is(valueOf(after, 'ci_jobs', { state: 'queued' }), 0);
});

test('the served generation, its as-of and age; the last pipeline run, stage by stage', async () => {
  const t0 = Date.now() / 1000;
  const m = await metrics();
  const t1 = Date.now() / 1000;
  const current = await readCurrent(dataDirLayout(dir));
  assert.equal(
    m.metrics.ci_generation_info!.data.map((d) => d.labels),
    [{ generation: s.snapshots.generation!.id }],
  );
  assert.is(s.snapshots.generation!.id, current);
  assert.is(valueOf(m, 'ci_generation_info', { generation: current! }), 1);
  assert.is(valueOf(m, 'ci_generation_as_of_timestamp_seconds'), AS_OF.getTime() / 1000);
  const age = valueOf(m, 'ci_generation_age_seconds');
  assert.ok(age >= t0 - AS_OF.getTime() / 1000 && age <= t1 - AS_OF.getTime() / 1000, `age ${age}`);
  assert.is(valueOf(m, 'ci_generations_draining'), 0);
  assert.is(valueOf(m, 'ci_generation_posts'), s.snapshots.generation!.posts);

  assert.equal(
    m.metrics.ci_pipeline_last_run_stage_duration_seconds!.data.map((d) => [d.labels.stage, (d as { value: number }).value]),
    run.stages.map((st) => [st.stage, st.ms / 1000]),
  );
  assert.is(valueOf(m, 'ci_pipeline_last_run_duration_seconds'), run.ms / 1000);
  assert.is(valueOf(m, 'ci_pipeline_last_run_success', { mode: 'full' }), 1, 'a first run is a full one');
  // What the run's ingest took in, quarantined by reason, and deleted.
  const ingest = summaryOf(run, 'ingest') as { accepted: number; updated: number; quarantinedBy: Record<string, number> };
  assert.is(valueOf(m, 'ci_pipeline_last_run_ingested_records'), ingest.accepted + ingest.updated);
  assert.is(valueOf(m, 'ci_pipeline_last_run_deleted_posts'), 0);
  for (const reason of ['uuid', 'published_at', 'json']) assert.ok(ingest.quarantinedBy[reason]! >= 1, reason);
  assert.equal(
    Object.fromEntries(
      m.metrics.ci_pipeline_last_run_quarantined_records!.data.map((d) => [d.labels.reason, (d as { value: number }).value]),
    ),
    ingest.quarantinedBy,
  );
  // Narratives and themes by window, as the generation holds them; the build serving.
  const gen = s.snapshots.generation!;
  for (const w of ['7d', '30d', '90d', 'all']) {
    assert.is(valueOf(m, 'ci_narratives', { window: w }), gen.maps.narratives.filter((n) => n.narrative.window_key === w).length, w);
    assert.is(valueOf(m, 'ci_themes', { window: w }), gen.maps.themes.filter((t) => t.theme.window_key === w).length, w);
  }
  const build = m.metrics.ci_build_info!.data[0]!;
  assert.equal(
    [build.labels.version, (build as { value: number }).value],
    [JSON.parse(fs.readFileSync('package.json', 'utf8')).version, 1],
  );
  assert.match(String(build.labels.commit), /^([0-9a-f]{12}|unknown)$/);
});

test('a failed pipeline run is recorded as failed, with the stages it finished', async () => {
  const abort = new AbortController();
  abort.abort();
  const config = loadConfig({ DATA_DIR: openDir, LOG_LEVEL: 'silent' });
  const failed = await runStages(resolveStages(['run']), {
    config,
    log: createLogger('test', 'silent'),
    signal: abort.signal,
    tty: false,
  }).then(
    () => null,
    (err: Error) => err,
  );
  assert.is(failed?.message, 'stage ingest abandoned on signal');
  const last = await readLastRun(dataDirLayout(openDir));
  assert.is(last?.ok, false);
  assert.is(last?.error, 'stage ingest abandoned on signal');
  assert.equal(last?.stages, []);
  const m = await scrape(open.baseUrl.replace('0.0.0.0', '127.0.0.1'));
  assert.is(valueOf(m, 'ci_pipeline_last_run_success', { mode: 'incremental' }), 0);
  assert.not.ok(has(m, 'ci_pipeline_last_run_success', { mode: 'full' }), 'the full run before it is no longer the last');
  assert.not.ok(has(m, 'ci_pipeline_last_run_stage_duration_seconds'), 'no stage finished');
});

test('webhook deliveries: the observer counts attempts by outcome and times them', async () => {
  const before = await metrics();
  assert.is(histogramOf(before, 'ci_webhook_delivery_duration_seconds').count, 0);
  for (const outcome of ['delivered', 'retry', 'gave_up'] as const)
    assert.ok(has(before, 'ci_webhook_delivery_attempts_total', { outcome }), outcome);
  s.metrics.deliveries.attempt('delivered', 120);
  s.metrics.deliveries.attempt('retry', 10_000);
  s.metrics.deliveries.attempt('delivered', 40);
  const after = await metrics();
  assert.is(delta(before, after, 'ci_webhook_delivery_attempts_total', { outcome: 'delivered' }), 2);
  assert.is(delta(before, after, 'ci_webhook_delivery_attempts_total', { outcome: 'retry' }), 1);
  assert.is(delta(before, after, 'ci_webhook_delivery_attempts_total', { outcome: 'gave_up' }), 0);
  const h = histogramOf(after, 'ci_webhook_delivery_duration_seconds');
  assert.is(h.count - histogramOf(before, 'ci_webhook_delivery_duration_seconds').count, 3);
  assert.is(h.buckets['0.05'], 1);
  assert.is(h.buckets['0.25'], 2);
  assert.is(h.buckets['10'], 3);
  near(h.sum! - histogramOf(before, 'ci_webhook_delivery_duration_seconds').sum!, 10.16, 'latency sum');
});

test('alert evaluations and their events by condition, as the evaluator made them', async () => {
  const before = await metrics();
  for (const condition of ['new_narrative', 'spike', 'lifecycle', 'momentum'])
    assert.ok(has(before, 'ci_alert_events_total', { condition }), condition);
  assert.ok(await s.alerts.watches.add(watchFor('http://127.0.0.1:9/hook'), 100));
  // A new generation an hour later, with the posts of a new story: the watch (any narrative) is evaluated.
  writeLines(path.join(dir, 'landing', 'later.ndjson'), storyPosts(NEW_WORD_STORIES[0]!, new Date(AS_OF.getTime() + 3_600_000)));
  await runPipeline(dir, ['run'], new Date(AS_OF.getTime() + 3_600_000));
  await pollUntil('the new generation evaluated', async () => delta(before, await metrics(), 'ci_alert_evaluations_total') === 1, 30_000);
  await s.alerts.evaluator.idle();
  const after = await metrics();
  const report = s.alerts.evaluator.reports.at(-1)!;
  for (const condition of ['new_narrative', 'spike', 'lifecycle', 'momentum'])
    assert.is(
      delta(before, after, 'ci_alert_events_total', { condition }),
      report.events.filter((e) => e.type === `narrative.${condition}`).length,
      condition,
    );
  assert.ok(report.events.length > 0, 'the new story fired');
});

/** The outbox's own figures: every watch's events (all it keeps: at most 100 finished ones per watch), counted by status. */
async function eventsByStatus(): Promise<Record<string, number>> {
  const by: Record<string, number> = {};
  for (const w of await s.alerts.watches.all())
    for (const e of await s.alerts.outbox.events(w.id, 10_000)) by[e.status] = (by[e.status] ?? 0) + 1;
  return by;
}

const stateOf = (w: Watch) => s.alerts.outbox.events(w.id, 100);

test('the webhook backlog: events still to deliver by status, watches by state, as the outbox and the watch store hold them', async () => {
  const failing = await startReceiver(() => 500);
  const taking = await startReceiver(() => 200);
  try {
    const before = await metrics();
    const pausedAt = { at: new Date().toISOString(), reason: 'paused by the test' };
    const [down, up, held] = [watchFor(failing.url), watchFor(taking.url), { ...watchFor(taking.url), paused: pausedAt }];
    for (const w of [down, up, held]) assert.ok(await s.alerts.watches.add(w, 100));
    const fired = (w: Watch, n: number) => Array.from({ length: n }, (_, i) => eventFor(w, i + 1));
    assert.is((await s.alerts.outbox.add([...fired(down, 2), ...fired(up, 1), ...fired(held, 3)])).length, 6);
    // The failing receiver's events are tried once and wait for a retry (ALERTS_RETRY_BASE_MS, 10 s on), the other
    // receiver's delivered, the paused watch's held without an attempt.
    await pollUntil(
      'every event attempted or held',
      async () =>
        (await stateOf(down)).every((e) => e.status === 'pending' && e.attempts >= 1) &&
        (await stateOf(up)).every((e) => e.status === 'delivered') &&
        (await stateOf(held)).every((e) => e.status === 'paused'),
      30_000,
    );
    const after = await metrics();
    const by = await eventsByStatus();
    assert.equal((after.metrics.ci_webhook_outbox_events?.data ?? []).map((d) => d.labels.status).sort(), ['paused', 'pending']);
    assert.is(valueOf(after, 'ci_webhook_outbox_events', { status: 'pending' }), by.pending ?? 0);
    assert.is(valueOf(after, 'ci_webhook_outbox_events', { status: 'paused' }), by.paused ?? 0);
    assert.ok((by.delivered ?? 0) >= 1, 'a delivered event, which is no backlog');
    assert.is(delta(before, after, 'ci_webhook_outbox_events', { status: 'pending' }), 2);
    assert.is(delta(before, after, 'ci_webhook_outbox_events', { status: 'paused' }), 3);
    assert.is(taking.received.length, 1, 'a paused watch sends nothing');

    const watches = await s.alerts.watches.all();
    assert.is(valueOf(after, 'ci_alert_watches', { state: 'paused' }), watches.filter((w) => w.paused).length);
    assert.is(valueOf(after, 'ci_alert_watches', { state: 'active' }), watches.filter((w) => !w.paused).length);
    assert.is(delta(before, after, 'ci_alert_watches', { state: 'active' }), 2);
    assert.is(delta(before, after, 'ci_alert_watches', { state: 'paused' }), 1);
  } finally {
    await failing.close();
    await taking.close();
  }
});

test.run();
