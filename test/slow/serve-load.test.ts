// The server under concurrency and change, over a real socket: 200 concurrent searches on a small
// balance never overdraw and their charges sum to the balance drop; rows respect the window; a
// hot swap under steady load fails no request; the access log carries no secret; the ledger's
// admin endpoint answers loopback callers with ADMIN_TOKEN on the running server. This server has
// SEARCH_PATTERNS on, so search answers carry pattern entries (off, the default, in serve.test.ts).
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { loadConfig } from '../../core/infra/config.ts';
import { createLogger } from '../../core/infra/log.ts';
import { pollUntil } from '../../core/infra/wait-at-most.ts';
import { toMicro } from '../../ledger/money.ts';
import { InThreadEngine } from '../../serve/search/in-thread-engine.ts';
import { analyseSearch } from '../../core/ranking/search.ts';
import { startServer, type RunningServer } from '../../serve/server.ts';
import { runPipeline, pipedSampleDir } from '../helpers/pipeline.ts';
import { callApi } from '../helpers/http.ts';
import { cleanupTmp } from '../helpers/tmp.ts';

const ADMIN_TOKEN = 'admin-token-for-the-test-9f3c';
let s: RunningServer;
let dir: string;
let logFile: string;
const secrets: string[] = [];

const call = (method: string, p: string, key: string, body?: unknown) => callApi(s.baseUrl, key, method, p, { body });

test.before(async () => {
  dir = await pipedSampleDir();
  logFile = path.join(dir, 'access.log');
  s = await startServer(
    loadConfig({
      DATA_DIR: dir,
      PORT: '0',
      HOST: '127.0.0.1',
      ADMIN_TOKEN,
      SEARCH_PATTERNS: 'on',
      DEMO_CREDITS: '100',
      RATE_LIMIT_RPS: '10000',
      RATE_LIMIT_BURST: '10000',
    }),
    createLogger('test', 'info', logFile),
  );
  secrets.push(s.demo.secret, ADMIN_TOKEN);
});

test.after(async () => {
  await s?.close();
  cleanupTmp();
});

test('200 concurrent searches on a small balance: never overdrawn; charges sum to the balance drop; no hold left open', async () => {
  const acc = await s.ledger.createAccount('small');
  const { secret } = await s.ledger.createKey(acc.id, 'k');
  secrets.push(secret);
  await s.ledger.topup(acc.id, toMicro('0.5')); // 50 rows' worth; each search holds 5 rows
  const results = await Promise.all(
    Array.from({ length: 200 }, (_, i) =>
      call('POST', '/search', secret, { query: i % 2 ? 'coffee' : 'sourdough bread', limit: 5, window: 'all' }),
    ),
  );
  const ok = results.filter((r) => r.status === 200);
  assert.ok(
    results.every((r) => r.status === 200 || r.status === 402),
    `statuses ${[...new Set(results.map((r) => r.status))]}`,
  );
  assert.ok(ok.length >= 10, `${ok.length} answered`);
  assert.ok(
    results.some((r) => r.status === 402),
    'the balance runs out',
  );
  const charged = ok.reduce((a, r) => a + toMicro(String(r.json.usage.credits)), 0);
  const after = await s.ledger.balance(acc.id);
  assert.is(toMicro('0.5') - after.balanceMicro, charged, 'charges equal the balance drop');
  assert.ok(after.balanceMicro >= 0, 'never overdrawn');
  // Each refusal happened because the holds of the searches in flight left less than one search's
  // hold available, never because they had spent more than the balance.
  for (const r of results.filter((x) => x.status === 402)) {
    assert.ok(r.json.credits_available >= 0 && r.json.credits_available < 0.05, `402 with ${r.json.credits_available} available`);
  }
  for (const r of ok) assert.is(toMicro(String(r.json.usage.credits)), r.json.content.length * toMicro('0.01'));
  for (const r of results.filter((x) => x.status === 402)) assert.is(r.json.error, 'insufficient_credits');
  assert.is((await s.ledger.openHolds()).length, 0);
});

test('SEARCH_PATTERNS on: pattern entries with every field of a pattern entry, in range, ranked by queryRelevance, readable', async () => {
  let seen = 0;
  for (const q of ['teal waves', 'coffee', 'sunset photo', 'pastel', 'recipe video']) {
    const r = await call('POST', '/search', s.demo.secret, { query: q, limit: 50, window: 'all' });
    assert.is(r.status, 200);
    const rel = r.json.patterns.map((p: any) => p.queryRelevance);
    assert.equal(
      rel,
      [...rel].sort((a: number, b: number) => b - a),
      'ranked',
    );
    const inAnswer = new Set(r.json.content.flatMap((c: any) => c.patternKeys));
    for (const p of r.json.patterns) {
      seen++;
      for (const k of ['lexicalMatch', 'memberTextMatch', 'queryRelevance']) assert.ok(p[k] >= 0 && p[k] <= 1, `${k} ${p[k]}`);
      assert.ok(p.visualSimilarity >= -1 && p.visualSimilarity <= 1);
      assert.ok(p.lexicalMatch > 0 || inAnswer.has(p.pattern.patternKey), 'a candidate shares a term or holds a returned row');
      for (const k of ['clusteringMethod', 'confidence', 'contentCount', 'patternKey', 'recurrentElements', 'trajectory', 'reconciliation'])
        assert.ok(k in p.pattern, k);
      assert.ok(Array.isArray(p.lookalikes) && Array.isArray(p.representativeContent) && p.representativeContent.length > 0);
      assert.is((await call('GET', `/intelligence/patterns/${p.pattern.patternKey}`, s.demo.secret)).status, 200);
    }
  }
  assert.ok(seen > 0, 'some query finds patterns');
});

test('search workers (answer workers over the shared parts, one graph worker) rank, cluster and build the answer exactly as this thread does', async () => {
  const lease = s.snapshots.lease();
  try {
    const here = new InThreadEngine();
    const inline = await here.load(lease.gen.dir, null);
    let found = 0;
    assert.ok(
      lease.gen.index.hnsw === null && lease.gen.index.shared !== null,
      'the main thread holds no graphs; vectors and postings are shared',
    );
    for (const [query, window] of [
      ['coffee', 'all'],
      ['sourdough starter', '30d'],
      ['#music', '90d'],
      ['festival lineup leak', '7d'],
    ] as const) {
      const params = { query, limit: 50, window };
      const viaWorkers = await s.searchEngine.search(lease.gen, params);
      found += viaWorkers.ranked.length;
      assert.equal(viaWorkers, await here.search(inline, params), `${query} ${window}`);
      // The whole answer too, built by an answer worker against built here (emergent narratives carry their build time).
      const request = { params: analyseSearch(params), patterns: true };
      const text = (b: { json: Uint8Array }) =>
        Buffer.from(b.json)
          .toString()
          .replace(/"computed_at":"[^"]*"/g, '"computed_at":"-"');
      const [worker, built] = [await s.searchEngine.answer(lease.gen, request), await here.answer(inline, request)];
      assert.is(worker.count, viaWorkers.ranked.length);
      assert.is(text(worker), text(built), `${query} ${window}: the answer's JSON`);
    }
    assert.ok(found > 50, `${found} rows found`);
  } finally {
    lease.release();
  }
});

test('rows respect the window, for every window', async () => {
  const lease = s.snapshots.lease();
  const windows = lease.gen.manifest.windows;
  lease.release();
  for (const w of ['7d', '30d', '90d', 'all'] as const) {
    for (const q of ['coffee', 'sourdough starter', 'festival lineup', 'recipe']) {
      const r = await call('POST', '/search', s.demo.secret, { query: q, limit: 300, window: w });
      assert.is(r.status, 200);
      assert.is(r.json.window, w);
      for (const c of r.json.content) {
        const t = Date.parse(c.publishedAt);
        assert.ok(t >= Date.parse(windows[w].start) && t <= Date.parse(windows[w].end), `${c.publishedAt} in ${w}`);
      }
    }
  }
});

test('hot swap under load: a new generation comes in while requests run; none fails', async () => {
  const before = (await call('GET', '/health', s.demo.secret)).json.generation;
  let stop = false;
  const statuses: number[] = [];
  const load = Array.from({ length: 8 }, async (_, w) => {
    for (let i = 0; !stop; i++) {
      const r =
        w % 2
          ? await call('POST', '/search', s.demo.secret, { query: ['coffee', 'bread', 'music'][i % 3], limit: 10 })
          : await call('GET', w % 4 ? '/narratives/trending?window=all' : '/intelligence/patterns?scope=all', s.demo.secret);
      statuses.push(r.status);
    }
  });
  const swapped = (async () => {
    await runPipeline(dir, ['publish']);
    await s.snapshots.refresh();
    // Keep the load on the new generation for 50 more requests, then stop.
    const seen = statuses.length;
    await pollUntil('50 requests on the new generation', () => statuses.length >= seen + 50, 60_000, 5);
    stop = true;
  })();
  await Promise.all([...load, swapped]);
  const h = await call('GET', '/health', s.demo.secret);
  assert.is.not(h.json.generation, before, 'the new generation is served');
  assert.ok(statuses.length > 50, `${statuses.length} requests`);
  assert.equal([...new Set(statuses)], [200], `statuses ${[...new Set(statuses)]}`);
  assert.is(h.json.draining_generations, 0, 'the old generation is freed once its requests are done');
});

test('a search worker that dies is replaced: its generation reloaded, searches answer again (the graph worker, then an answer worker)', async () => {
  const pool = s.searchPool!;
  for (const which of [0, 1]) {
    const before = pool.restarts;
    await pool.workers[which]!.terminate();
    await pollUntil(`worker ${which} replaced`, () => pool.restarts > before, 30_000);
    // The replacement loads the served generation (a search meanwhile waits for it, or past
    // SEARCH_BUDGET_MS is handed to a job), then searches answer.
    await pool.allReady();
    for (let i = 0; i < 4; i++) {
      const r = await call('POST', '/search', s.demo.secret, { query: 'coffee', limit: 5, window: 'all' });
      assert.is(r.status, 200, JSON.stringify(r.json));
      assert.ok(r.json.content.length > 0);
    }
    assert.is((await s.ledger.openHolds()).length, 0);
  }
});

test('the ledger admin endpoint on the running server: loopback with ADMIN_TOKEN only', async () => {
  const url = `${s.baseUrl}/admin/credits.topup`;
  const body = JSON.stringify({ account: s.demo.account, credits: '2.5' });
  const before = (await s.ledger.balance(s.demo.account)).balanceMicro;
  const denied = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', authorization: 'Bearer wrong' }, body });
  assert.is(denied.status, 401);
  const ok = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${ADMIN_TOKEN}` },
    body,
  });
  assert.is(ok.status, 200);
  assert.is((await s.ledger.balance(s.demo.account)).balanceMicro - before, toMicro('2.5'));
});

test('access log: one JSON line per request with its id and status, and no secret anywhere', async () => {
  const made = [
    { r: await call('GET', '/health', s.demo.secret), path: '/api/health' },
    { r: await call('POST', '/search', s.demo.secret, { query: 'coffee', limit: 2 }), path: '/api/search' },
    { r: await call('GET', '/health', 'sk_not_a_key'), path: '/api/health' },
    { r: await call('GET', '/narratives/nope', s.demo.secret), path: '/api/narratives/nope' },
    { r: await call('POST', '/usage', s.demo.secret), path: '/api/usage' },
  ];
  assert.equal(
    made.map((m) => m.r.status),
    [200, 200, 403, 404, 405],
  );
  const access = fs
    .readFileSync(logFile, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l))
    .filter((l) => l.msg === 'access');
  for (const { r, path: p } of made) {
    const lines = access.filter((l) => l.requestId === r.headers.get('x-request-id'));
    assert.is(lines.length, 1, `one line for ${p}`);
    assert.equal([lines[0].status, lines[0].path], [r.status, p]);
  }
  const text = fs.readFileSync(logFile, 'utf8');
  for (const secret of secrets) assert.not.ok(text.includes(secret), 'a secret is in the log');
});

test.run();
