// Asynchronous jobs over a real server on the sample corpus: each kind end to end, the billing of
// prices and holds with exact figures, the cache (docs/jobs.md) for the payer and for another account,
// ownership, and the strict submit body.
import fs from 'node:fs';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { loadConfig } from '../../core/infra/config.ts';
import { createLogger } from '../../core/infra/log.ts';
import { pollUntil } from '../../core/infra/wait-at-most.ts';
import { toMicro } from '../../ledger/money.ts';
import { FileJobStore } from '../../serve/jobs/file-job-store.ts';
import { startServer, type RunningServer } from '../../serve/server.ts';
import { rejects } from '../helpers/assert.ts';
import { callApi } from '../helpers/http.ts';
import { pipedSampleDir } from '../helpers/pipeline.ts';
import { ledgerEnv, stopPostgres } from '../helpers/postgres.ts';
import { cleanupTmp } from '../helpers/tmp.ts';

let s: RunningServer;

async function account(name: string, credits: string): Promise<{ id: string; secret: string }> {
  const a = await s.ledger.createAccount(name);
  await s.ledger.topup(a.id, toMicro(credits));
  const { secret } = await s.ledger.createKey(a.id);
  return { id: a.id, secret };
}

const call = (key: string, method: string, p: string, body?: unknown, headers?: Record<string, string>) =>
  callApi(s.baseUrl, key, method, p, { body, headers });
const available = async (id: string) => (await s.ledger.balance(id)).availableMicro;

/** Submit and poll until the job is done (bounded). */
async function runJob(key: string, body: unknown): Promise<{ submit: any; done: any }> {
  const submit = await call(key, 'POST', '/intelligence/jobs', body);
  if (submit.status !== 202) return { submit, done: submit.json };
  let done: any;
  await pollUntil(
    'the job to finish',
    async () => {
      const got = await call(key, 'GET', `/intelligence/jobs/${submit.json.jobId}`);
      assert.is(got.status, 200);
      done = got.json;
      return done.status === 'succeeded' || done.status === 'failed';
    },
    30_000,
    50,
  );
  return { submit, done };
}

test.before(async () => {
  const dir = await pipedSampleDir();
  s = await startServer(
    loadConfig({
      ...(await ledgerEnv()),
      DATA_DIR: dir,
      PORT: '0',
      HOST: '127.0.0.1',
      DEMO_CREDITS: '100',
      RATE_LIMIT_RPS: '10000',
      RATE_LIMIT_BURST: '10000',
      LOG_LEVEL: 'silent',
    }),
    createLogger('test', 'silent'),
  );
});

test.after(async () => {
  await s?.close();
  await stopPostgres();
  cleanupTmp();
});

test('records: 202 with the hold, then the rows, charged 0.01 per record returned; the cache re-reads at full price', async () => {
  const a = await account('records', '50');
  const before = await available(a.id);
  const { submit, done } = await runJob(a.secret, { kind: 'records', query: 'coffee', limit: 200, window: 'all' });
  assert.is(submit.status, 202);
  assert.ok(['queued', 'running'].includes(submit.json.status), submit.json.status);
  assert.is(submit.json.estimated_cost, 2);
  assert.is(submit.headers.get('x-service-credits-used'), '2');
  assert.ok(submit.json.statusUrl.endsWith(`/intelligence/jobs/${submit.json.jobId}`));
  assert.is(done.status, 'succeeded');
  const n = done.result.content.length;
  assert.ok(n > 0 && n <= 200 && done.records === n);
  assert.is(done.charged, n / 100);
  assert.is(before - (await available(a.id)), n * toMicro('0.01'));
  for (const k of ['uuid', 'exampleRankingScore', 'narrativeIds', 'enrichment']) assert.ok(k in done.result.content[0], k);
  // The same request, normalised (case, spacing): a cache hit, 200 with the result inline and charged at full price.
  const again = await call(a.secret, 'POST', '/intelligence/jobs', { kind: 'records', query: '  COFFEE ', limit: 200, window: 'all' });
  assert.is(again.status, 200);
  assert.is(again.json.cached, true);
  assert.is(again.json.charged, n / 100);
  assert.equal(again.json.result.content, done.result.content);
  assert.is(before - (await available(a.id)), 2 * n * toMicro('0.01'));
});

test('stats and patterns: flat fees, cached until midnight UTC: free for the payer, full price for another account', async () => {
  const a = await account('stats-a', '50');
  const b = await account('stats-b', '50');
  const a0 = await available(a.id);
  const st = await runJob(a.secret, { kind: 'stats', query: 'coffee', window: 'all' });
  assert.is(st.submit.json.estimated_cost, 5);
  assert.is(st.done.status, 'succeeded');
  assert.is(st.done.charged, 5);
  assert.ok(st.done.result.records > 0 && Array.isArray(st.done.result.by_platform) && st.done.result.engagement.interactions.p50 >= 0);
  const pt = await runJob(a.secret, { kind: 'patterns', query: 'coffee', window: 'all' });
  assert.is(pt.done.status, 'succeeded');
  assert.is(pt.done.charged, 10);
  assert.ok(Array.isArray(pt.done.result.patterns));
  assert.is(a0 - (await available(a.id)), toMicro('15'));
  const free = await call(a.secret, 'POST', '/intelligence/jobs', { kind: 'stats', query: 'coffee', window: 'all' });
  assert.is(free.status, 200);
  assert.is(free.json.charged, 0);
  assert.is(a0 - (await available(a.id)), toMicro('15'));
  const b0 = await available(b.id);
  const paid = await call(b.secret, 'POST', '/intelligence/jobs', { kind: 'stats', query: 'coffee', window: 'all' });
  assert.is(paid.status, 200);
  assert.is(paid.json.charged, 5);
  assert.is(b0 - (await available(b.id)), toMicro('5'));
  assert.equal(paid.json.result, st.done.result);
});

test('insights: 0.015 per record analysed; with signals below the floor: failed with 422 and a full refund', async () => {
  const a = await account('insights', '100');
  const a0 = await available(a.id);
  const ins = await runJob(a.secret, { kind: 'insights', query: 'coffee', limit: 400, window: 'all' });
  assert.is(ins.submit.json.estimated_cost, 6);
  assert.is(ins.done.status, 'succeeded');
  const n = ins.done.result.analysed;
  assert.ok(n > 0 && n <= 400);
  assert.is(ins.done.charged, (n * 15) / 1000);
  assert.is(a0 - (await available(a.id)), n * toMicro('0.015'));
  for (const k of ['narratives', 'sentiment', 'themes', 'top_creators', 'platforms', 'time_series', 'summary'])
    assert.ok(k in ins.done.result, k);
  assert.is(ins.done.result.summary.source, 'template');
  assert.ok(!('signals' in ins.done.result));
  // The sample has fewer than 1,500 posts in all: signals cannot be given.
  const a1 = await available(a.id);
  const sig = await runJob(a.secret, { kind: 'insights', query: 'coffee', window: 'all', includeSignals: true });
  assert.is(sig.submit.json.estimated_cost, 46);
  assert.is(sig.done.status, 'failed');
  assert.is(sig.done.error.status, 422);
  assert.is(sig.done.charged, 0);
  assert.is(await available(a.id), a1);
});

test('submit rules: 400 for an explicit limit below the signals floor and for undeclared fields; 402 with tier 2 and maxLimitForWindow', async () => {
  const a = await account('rules', '10');
  const low = await call(a.secret, 'POST', '/intelligence/jobs', {
    kind: 'insights',
    query: 'coffee',
    limit: 374,
    window: '7d',
    includeSignals: true,
  });
  assert.is(low.status, 400);
  assert.match(low.json.error, /375/);
  assert.is((await call(a.secret, 'POST', '/intelligence/jobs', { kind: 'records', query: 'x', depth: 3 })).status, 400);
  assert.is((await call(a.secret, 'POST', '/intelligence/jobs', { kind: 'stats', query: 'x', includeSignals: true })).status, 400);
  assert.is((await call(a.secret, 'POST', '/intelligence/jobs', { kind: 'nope', query: 'x' })).status, 400);
  // 10 credits: default insights (30d, 3,000 records) needs 45.
  const poor = await call(a.secret, 'POST', '/intelligence/jobs', { kind: 'insights', query: 'coffee' });
  assert.is(poor.status, 402);
  // 10 credits cover 666 records: under the 30d minimum depth of 750, so nothing to recommend; over the 7d one of 375.
  assert.equal(poor.json, {
    error: 'insufficient_credits',
    credits_required: 45,
    credits_available: 10,
    recommendations: { maxLimitForWindow: 0, topUpUrl: poor.json.recommendations.topUpUrl },
    tier: '2',
    window: '30d',
    request_id: poor.json.request_id,
  });
  const week = await call(a.secret, 'POST', '/intelligence/jobs', { kind: 'insights', query: 'coffee', window: '7d' });
  assert.equal([week.status, week.json.credits_required, week.json.recommendations.maxLimitForWindow], [402, 22.5, 666]);
  const sig = await call(a.secret, 'POST', '/intelligence/jobs', { kind: 'insights', query: 'coffee', includeSignals: true });
  assert.is(sig.status, 402);
  assert.is(sig.json.credits_required, 46);
  assert.is(sig.json.recommendations.maxLimitForWindow, 0); // 9 credits cover 600 records, under the 750 floor
  const pat = await call(a.secret, 'POST', '/intelligence/jobs', { kind: 'patterns', query: 'coffee' });
  assert.is(pat.status, 202); // 10 credits cover the flat 10
  const st = await call(a.secret, 'POST', '/intelligence/jobs', { kind: 'stats', query: 'tea' });
  assert.is(st.status, 402);
  assert.is(st.json.tier, '1');
  assert.is(st.json.recommendations.maxLimitForWindow, 0);
});

test('only the owner sees a job; an Idempotency-Key gives the same job, and another body with it is a 422', async () => {
  const a = await account('owner', '20');
  const b = await account('other', '20');
  const sub = await call(
    a.secret,
    'POST',
    '/intelligence/jobs',
    { kind: 'records', query: 'music', limit: 10 },
    { 'Idempotency-Key': 'k-1' },
  );
  assert.is(sub.status, 202);
  assert.is((await call(b.secret, 'GET', `/intelligence/jobs/${sub.json.jobId}`)).status, 404);
  assert.is((await call(a.secret, 'GET', '/intelligence/jobs/job_nope')).status, 404);
  const again = await call(
    a.secret,
    'POST',
    '/intelligence/jobs',
    { kind: 'records', query: 'music', limit: 10 },
    { 'Idempotency-Key': 'k-1' },
  );
  assert.is(again.json.jobId, sub.json.jobId);
  const other = await call(
    a.secret,
    'POST',
    '/intelligence/jobs',
    { kind: 'records', query: 'music', limit: 11 },
    { 'Idempotency-Key': 'k-1' },
  );
  assert.is(other.status, 422);
  // Two at once with a new key: one job; the other waits its turn (409) or, once the first is in, gets the same job.
  const body = { kind: 'records', query: 'music', limit: 12 };
  const pair = await Promise.all([1, 2].map(() => call(a.secret, 'POST', '/intelligence/jobs', body, { 'Idempotency-Key': 'k-2' })));
  const ids = new Set(pair.filter((p) => p.status === 202).map((p) => p.json.jobId));
  assert.is(ids.size, 1);
  assert.ok(
    pair.every((p) => p.status === 202 || p.status === 409),
    pair.map((p) => p.status).join(),
  );
});

test('retention: finished jobs older than JOB_RETENTION_DAYS go, and a result a kept cache hit reads stays', async () => {
  const a = await account('retention', '20');
  const { submit } = await runJob(a.secret, { kind: 'records', query: 'sourdough', limit: 5, window: 'all' });
  const hit = await call(a.secret, 'POST', '/intelligence/jobs', { kind: 'records', query: 'sourdough', limit: 5, window: 'all' });
  assert.is(hit.json.cached, true);
  const source = (await s.jobs.get(a.id, submit.json.jobId))!;
  await s.jobs.store.save({ ...source, finishedAt: new Date(Date.now() - 8 * 86_400_000).toISOString() });
  assert.ok((await s.jobs.prune()) >= 1);
  assert.is((await call(a.secret, 'GET', `/intelligence/jobs/${submit.json.jobId}`)).status, 404);
  assert.is(await s.jobs.store.get(submit.json.jobId), null, 'the record is gone from the book');
  const kept = await call(a.secret, 'GET', `/intelligence/jobs/${hit.json.jobId}`);
  assert.is(kept.status, 200);
  assert.equal(kept.json.result.content, hit.json.result.content);
  // Everything is old a week and a day from now.
  await s.jobs.prune(Date.now() + 8 * 86_400_000);
  assert.is((await call(a.secret, 'GET', `/intelligence/jobs/${hit.json.jobId}`)).status, 404);
  for (const id of [submit.json.jobId, hit.json.jobId]) await rejects(() => s.jobs.store.readResult(id), /no result|ENOENT/);
  if (s.jobs.store instanceof FileJobStore)
    assert.equal(
      fs.readdirSync(s.jobs.store.files.dir).filter((f) => f.startsWith('job_')),
      [],
    );
});

test.run();
