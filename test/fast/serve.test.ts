// The HTTP server over a real generation (the committed sample through the whole pipeline), a real
// ledger and a real socket on 127.0.0.1: POST /search to the letter (each 400 case, 403, 402,
// billing headers equal to the ledger, idempotency), the free reads, health, 404s.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { loadConfig } from '../../core/infra/config.ts';
import { createLogger } from '../../core/infra/log.ts';
import { toMicro } from '../../ledger/money.ts';
import { HttpError } from '../../serve/http/http-error.ts';
import { RateLimiter } from '../../serve/http/rate-limit.ts';
import { startServer, type RunningServer } from '../../serve/server.ts';
import { runPipeline, pipedSampleDir } from '../helpers/pipeline.ts';
import { callApi, type CallOptions } from '../helpers/http.ts';
import { ledgerEnv, stopPostgres, testLedger } from '../helpers/postgres.ts';
import { cleanupTmp } from '../helpers/tmp.ts';
import path from 'node:path';
import { dataDirLayout } from '../../core/infra/data-dir.ts';
import { openDuckDB, sqlString } from '../../core/infra/duckdb.ts';
import { generationDir, readCurrent } from '../../core/snapshots/generations.ts';
import { loadContentColumns } from '../../serve/generation/content-columns.ts';
import { contentItem, contentItemsJson } from '../../serve/generation/content-item.ts';
import { loadGeneration } from '../../serve/generation/loaded-generation.ts';
import { search } from '../../core/ranking/search.ts';
import { utf8Concat } from '../../serve/search/answer-build.ts';

let s: RunningServer;
let dir: string;

const call = (method: string, path: string, opts: CallOptions = {}) => callApi(s.baseUrl, s.demo.secret, method, path, opts);

/** The ledger's settings: the same database for every server of this file (a data directory keeps its ledger). */
let ledger: Record<string, string>;

/** A server on the sample's data directory and the file's ledger, on a free port, with `env` on top. */
const server = (env: Record<string, string>) =>
  startServer(
    loadConfig({ ...ledger, DATA_DIR: dir, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'silent', ...env }),
    createLogger('test', 'silent'),
  );

test.before(async () => {
  dir = await pipedSampleDir();
  ledger = await ledgerEnv();
  // A warm-up budget no run here reaches: the hot swap test counts every recent search replayed.
  s = await server({ DEMO_CREDITS: '10', RATE_LIMIT_RPS: '1000', RATE_LIMIT_BURST: '1000', SWAP_WARM_UP_MS: '300000' });
});

test.after(async () => {
  await s?.close();
  await stopPostgres();
  cleanupTmp();
});

test('POST /search: 200 with every required field; billing headers equal the ledger; settled to rows returned', async () => {
  const before = await s.ledger.balance(s.demo.account);
  const r = await call('POST', '/search', { body: { query: 'sourdough starter', limit: 20, window: 'all' } });
  assert.is(r.status, 200, JSON.stringify(r.json));
  for (const k of ['content', 'creators', 'narratives', 'patterns', 'query', 'window', 'request_id', 'response_time_ms', 'usage'])
    assert.ok(k in r.json, k);
  assert.ok(r.json.content.length > 0 && r.json.content.length <= 20);
  assert.equal(r.json.patterns, []);
  const after = await s.ledger.balance(s.demo.account);
  const charged = before.balanceMicro - after.balanceMicro;
  assert.is(charged, r.json.content.length * toMicro('0.01'));
  assert.is(r.json.usage.credits, charged / 1e6);
  assert.is(r.headers.get('x-service-credits-used'), String(charged / 1e6));
  assert.is(r.headers.get('x-service-credits-remaining'), String(after.availableMicro / 1e6));
  const item = r.json.content[0];
  for (const k of [
    'uuid',
    'authorReach',
    'commentCount',
    'engagementDepth',
    'engagementScore',
    'exampleRankingScore',
    'likeCount',
    'shareCount',
    'viewCount',
    'rawSimilarity',
    'similarity',
    'recencyScore',
    'rrfScore',
    'narrativeIds',
    'patternKeys',
    'tags',
  ])
    assert.ok(k in item, k);
  // Every narrative id and pattern key of a row is readable at its endpoint.
  for (const id of item.narrativeIds) assert.is((await call('GET', `/narratives/${id}`)).status, 200);
  for (const key of item.patternKeys) assert.is((await call('GET', `/intelligence/patterns/${key}`)).status, 200);
  for (const n of r.json.narratives)
    assert.is((await call('GET', `/narratives/${n.id}`)).status, 200, `narrative ${n.id} (${n.source}) readable`);
  assert.is((await s.ledger.openHolds()).length, 0);
});

test("content columns: every row's narrative ids and pattern keys are its members tables' owners, in order", async () => {
  const gen = generationDir(dataDirLayout(dir), (await readCurrent(dataDirLayout(dir)))!);
  const db = await openDuckDB();
  try {
    const rows = (await db.numbers(`SELECT max(row_id)::INTEGER + 1 AS n FROM read_parquet(${sqlString(path.join(gen, 'posts.parquet'))})`))
      .n![0]!;
    const c = await loadContentColumns(gen, rows);
    for (const [lists, file, owner] of [
      [c.narrativeIds, 'narrative-members.parquet', 'narrative_id'],
      [c.patternKeys, 'pattern-members.parquet', 'pattern_key'],
    ] as const) {
      const want = new Map(
        (
          await db.all<{ post_row: number; owners: string[] }>(
            `SELECT post_row::INTEGER AS post_row, list(${owner} ORDER BY ${owner}) AS owners
              FROM read_parquet(${sqlString(path.join(gen, file))}) GROUP BY post_row`,
          )
        ).map((r) => [r.post_row, r.owners]),
      );
      let withOwners = 0;
      for (let r = 0; r < c.rows; r++) {
        assert.equal(lists.get(r), want.get(r) ?? [], `${file} row ${r}`);
        if (lists.get(r).length) withOwners++;
      }
      assert.is(withOwners, want.size, `${file}: rows with owners`);
    }
    assert.ok(c.narrativeIds.dict.length > 0, 'the sample has narratives');
  } finally {
    db.close();
  }
});

test("content items as JSON from the rows' cached fields: byte for byte JSON.stringify of the items, cold and warm", async () => {
  const gen = await loadGeneration(generationDir(dataDirLayout(dir), (await readCurrent(dataDirLayout(dir)))!));
  let compared = 0;
  for (const query of ['back to school supplies', '#fyp', 'coffee', 'list', 'the new phone camera review']) {
    for (const window of ['7d', '90d', 'all'] as const) {
      const ranked = search(gen.index, { query, limit: 100, window }, { exact: true });
      const want = JSON.stringify(ranked.map((r) => contentItem(gen, r)));
      for (const pass of ['cold', 'warm']) {
        const chunks = contentItemsJson(gen, ranked);
        for (const c of chunks) if (typeof c === 'string') assert.ok(/^[\x20-\x7e]*$/.test(c), `an ASCII chunk: ${c}`);
        const bytes = utf8Concat(chunks, ',"x":"naïve 🚀"');
        assert.is(Buffer.from(bytes).toString('utf8'), `${want},"x":"naïve 🚀"`, `${query} ${window}, ${pass}`);
        assert.is(bytes.buffer.byteLength, bytes.byteLength, 'the bytes own their buffer (a worker transfers it)');
      }
      compared += ranked.length;
    }
  }
  assert.ok(compared > 100, `${compared} items compared`);
});

test('POST /search: each 400 names the problem; nothing is charged', async () => {
  const before = (await s.ledger.balance(s.demo.account)).balanceMicro;
  const cases: Array<[unknown, RegExp] | [string, RegExp, true]> = [
    [{ query: 'x', limit: 0 }, /limit/],
    [{ query: 'x', limit: 301 }, /limit/],
    [{ query: 'x', limit: 1.5 }, /integer/],
    [{ query: 'x', limit: '5' }, /limit/],
    [{ query: 'x', window: '1y' }, /window/],
    [{ query: 'x', extra: true }, /extra/],
    [{}, /query/],
    [{ query: 7 }, /query/],
    [[1, 2], /object/],
    ['{"query": "x"', /JSON/, true],
    [JSON.stringify({ query: 'x'.repeat(40_000) }), /too large/, true],
  ];
  for (const c of cases) {
    const r = c[2] ? await call('POST', '/search', { raw: c[0] as string }) : await call('POST', '/search', { body: c[0] });
    assert.is(r.status, 400, JSON.stringify(c[0]).slice(0, 80));
    assert.match(r.json.error, c[1]);
  }
  assert.is((await s.ledger.balance(s.demo.account)).balanceMicro, before);
});

test('403 without, with an unknown, or with a revoked key; 404 JSON for unknown routes and ids', async () => {
  assert.is((await call('GET', '/health', { key: null })).status, 403);
  assert.is((await call('POST', '/search', { key: 'sk_nope', body: { query: 'x' } })).status, 403);
  const k = await s.ledger.createKey(s.demo.account, 'to-revoke');
  assert.is((await call('GET', '/health', { key: k.secret })).status, 200);
  await s.ledger.revokeKey(k.key.id);
  const r = await call('GET', '/health', { key: k.secret });
  assert.is(r.status, 403);
  assert.type(r.json.error, 'string');
  assert.is((await call('GET', '/nope')).status, 404);
  assert.is((await call('GET', '/narratives/no-such-id')).status, 404);
  assert.is((await call('GET', '/intelligence/patterns/pk-no')).status, 404);
});

test('402 when the balance cannot cover the hold: the spec body, nothing written', async () => {
  const acct = await s.ledger.createAccount('poor');
  await s.ledger.topup(acct.id, toMicro('0.5'));
  const { secret } = await s.ledger.createKey(acct.id);
  const seq = (await s.ledger.status()).lastSeq;
  const r = await call('POST', '/search', { key: secret, body: { query: 'coffee', limit: 100, window: '7d' } });
  assert.is(r.status, 402);
  assert.is(r.json.error, 'insufficient_credits');
  assert.is(r.json.credits_required, 1);
  assert.is(r.json.credits_available, 0.5);
  assert.is(r.json.recommendations.maxLimitForWindow, 50);
  assert.type(r.json.recommendations.topUpUrl, 'string');
  assert.is(r.json.tier, '1');
  assert.is(r.json.window, '7d');
  assert.is((await s.ledger.status()).lastSeq, seq, 'a refused hold writes nothing');
  assert.is((await call('POST', '/search', { key: secret, body: { query: 'coffee', limit: 50, window: '7d' } })).status, 200);
});

test('Idempotency-Key: a replay returns the original answer and charges nothing more; another body is 422', async () => {
  const body = { query: 'marathon training', limit: 5 };
  const a = await call('POST', '/search', { body, headers: { 'Idempotency-Key': 'idem-1' } });
  const balance = (await s.ledger.balance(s.demo.account)).balanceMicro;
  const b = await call('POST', '/search', { body, headers: { 'Idempotency-Key': 'idem-1' } });
  assert.is(b.status, 200);
  assert.equal(b.json, a.json);
  assert.is(b.headers.get('x-service-credits-used'), a.headers.get('x-service-credits-used'));
  assert.is((await s.ledger.balance(s.demo.account)).balanceMicro, balance);
  assert.is((await call('POST', '/search', { body: { ...body, limit: 6 }, headers: { 'Idempotency-Key': 'idem-1' } })).status, 422);
});

test('free reads: trending, narrative search, one narrative, trajectory, patterns browse/one/content/lookalikes, usage, health; none billed', async () => {
  const seq = (await s.ledger.status()).lastSeq;
  const t = await call('GET', '/narratives/trending?window=all&limit=5&spread=false');
  assert.is(t.status, 200);
  assert.ok(t.json.items.length > 0);
  for (let i = 1; i < t.json.items.length; i++) assert.ok(t.json.items[i - 1].burst_score >= t.json.items[i].burst_score);
  const n = t.json.items[0];
  const q = await call('GET', `/narratives/search?q=${encodeURIComponent(n.label.split(',')[0])}`);
  assert.ok(q.json.items.some((x: { id: string }) => x.id === n.id));
  const d = await call('GET', `/narratives/${n.id}?limit=3`);
  assert.is(d.json.posts.items.length, Math.min(3, n.content_count));
  assert.is(d.json.posts.total, n.content_count);
  assert.is((await call('GET', `/narratives/${n.id}/trajectory`)).json.points.length, 1);
  const p = await call('GET', '/intelligence/patterns?scope=all&limit=2');
  assert.is(p.status, 200);
  assert.ok(p.json.items.length > 0);
  if (p.json.nextCursor) assert.is((await call('GET', `/intelligence/patterns?scope=all&limit=2&cursor=${p.json.nextCursor}`)).status, 200);
  const key = p.json.items[0].patternKey;
  assert.is((await call('GET', `/intelligence/patterns/${key}`)).json.pattern.patternKey, key);
  const c1 = await call('GET', `/intelligence/patterns/${key}/content?limit=2`);
  assert.ok(c1.json.items.length > 0);
  // Pattern reads page with a cursor, like browsing does; offset is refused with a reason.
  if (c1.json.nextCursor) {
    const c2 = await call('GET', `/intelligence/patterns/${key}/content?limit=2&cursor=${c1.json.nextCursor}`);
    assert.is.not(c2.json.items[0].uuid, c1.json.items[0].uuid);
  }
  assert.match((await call('GET', `/intelligence/patterns/${key}/content?offset=2`)).json.error, /page with cursor/);
  assert.is((await call('GET', `/intelligence/patterns/${key}/lookalikes`)).status, 200);
  assert.is((await call('GET', '/intelligence/patterns?cursor=garbage')).status, 400);
  const u = await call('GET', '/usage?limit=2');
  assert.is(u.status, 200);
  assert.ok(u.json.entries.length > 0 && u.json.entries.every((e: { type: string }) => ['topup', 'settlement', 'refund'].includes(e.type)));
  const h = await call('GET', '/health');
  assert.is(h.json.generation, 'g000001');
  // The ledger this run is about (test/run.ts runs this file on both).
  assert.is(h.json.ledger.backend, testLedger);
  assert.is((await s.ledger.status()).lastSeq, seq, 'free reads write nothing to the ledger');
});

test('trending sorts (burst, momentum, emerging, volume, engagement) and daily counts with the period change', async () => {
  const by = async (sort: string) =>
    (await call('GET', `/narratives/trending?window=30d&limit=100&sort=${sort}&daily=true&spread=false`)).json;
  const burst = await by('burst');
  const plain = (await call('GET', '/narratives/trending?window=30d&limit=100&spread=false')).json;
  assert.equal(
    burst.items.map((n: { id: string }) => n.id),
    plain.items.map((n: { id: string }) => n.id),
    'burst is the default order',
  );
  assert.is(plain.sort, 'burst');
  assert.not.ok('daily_counts' in plain.items[0], 'daily counts only when asked');
  const key = {
    burst: 'burst_score',
    momentum: 'momentum_score',
    emerging: 'emerging_score',
    volume: 'content_count',
    engagement: 'total_engagement',
  } as const;
  for (const [sort, field] of Object.entries(key)) {
    const r = await by(sort);
    assert.is(r.sort, sort);
    assert.is(r.items.length, burst.items.length);
    const values = r.items.map((n: Record<string, unknown>) => Number(n[field]));
    assert.equal(
      values,
      [...values].sort((a, b) => b - a),
      `${sort} descending`,
    );
  }
  for (const n of burst.items.slice(0, 5)) {
    const d = (await call('GET', `/narratives/${n.id}`)).json;
    assert.equal(n.daily_counts, d.daily_counts);
    const last = n.daily_counts.slice(-7).reduce((a: number, b: number) => a + b, 0);
    const before = n.daily_counts.slice(-14, -7).reduce((a: number, b: number) => a + b, 0);
    assert.equal(n.period_change, { days: 7, current: last, previous: before, ratio: before ? (last - before) / before : null });
  }
  assert.is((await call('GET', '/narratives/trending?sort=size')).status, 400);
  assert.match((await call('GET', '/narratives/trending?daily=yes')).json.error, /daily must be true or false/);
});

test("trajectory days: each day's sentiment and stance are the narrative's formulas over that day's posts", async () => {
  const n = (await call('GET', '/narratives/trending?window=30d&limit=1&sort=volume')).json.items[0];
  const t = (await call('GET', `/narratives/${n.id}/trajectory`)).json;
  const posts = (await call('GET', `/narratives/${n.id}?limit=500`)).json.posts.items as Array<{
    publishedAt: string;
    enrichment: { tone: string | null };
  }>;
  assert.is(posts.length, n.content_count);
  const toned = t.daily.filter((d: { sentiment_score: number | null }) => d.sentiment_score !== null);
  assert.ok(toned.length > 3, 'days with a tone');
  for (const d of t.daily) {
    const start = Date.parse(d.start);
    const day = posts.filter((p) => Date.parse(p.publishedAt) >= start && Date.parse(p.publishedAt) < start + 86_400_000);
    assert.is(d.content_count, day.length);
    const tones = day.map((p) => p.enrichment.tone).filter((x) => x !== null);
    const score = tones.length
      ? (tones.filter((x) => x === 'positive').length - tones.filter((x) => x === 'negative').length) / tones.length
      : null;
    assert.is(d.sentiment_score, score, d.start);
    if (d.stance) assert.ok(Math.abs(Object.values(d.stance as Record<string, number>).reduce((a, b) => a + b, 0) - 1) < 1e-9);
    assert.is(typeof d.spike, 'boolean');
  }
});

test('prices and platforms: what the dashboard needs before a call', async () => {
  const p = (await call('GET', '/billing/prices')).json;
  assert.equal(p.search, { per_record: 0.01, default_limit: 100, max_limit: 300 });
  assert.equal(p.jobs.patterns, { per_call: 10 });
  const h = (await call('GET', '/health')).json;
  assert.equal(h.platforms, [...h.platforms].sort());
  assert.ok(h.platforms.includes('tiktok'));
});

test('rate limit: a token bucket per key; over it a 429 with Retry-After', () => {
  let now = 0;
  const rl = new RateLimiter(2, 3, () => now);
  for (let i = 0; i < 3; i++) rl.take('k1');
  const err = (() => {
    try {
      rl.take('k1');
      return null;
    } catch (e) {
      return e as HttpError;
    }
  })();
  assert.ok(err instanceof HttpError && err.status === 429 && err.headers['Retry-After'] === '1');
  rl.take('k2'); // another key has its own bucket
  now += 500;
  rl.take('k1'); // one token back after half a second at 2/s
});

test('versions: v1.0.1 by default and on request; an unknown version is a 400', async () => {
  const a = await call('GET', '/health');
  assert.is(a.headers.get('x-service-version'), 'v1.0.1');
  assert.is((await call('GET', '/health', { headers: { 'X-Service-Version': 'v1.0.1' } })).status, 200);
  assert.is((await call('GET', '/health?version=v1.0.1')).status, 200);
  const bad = await call('GET', '/health', { headers: { 'X-Service-Version': 'v9' } });
  assert.is(bad.status, 400);
  assert.match(bad.json.error, /v9/);
});

test('Idempotency-Key: a duplicate still in flight is a 409, and nothing is charged for it', async () => {
  // The first request is "in flight" for as long as the ledger holds its key open.
  assert.is((await s.ledger.idempotencyBegin(s.demo.account, 'race-1', 'whatever')).kind, 'new');
  const balance = (await s.ledger.balance(s.demo.account)).balanceMicro;
  const r = await call('POST', '/search', { body: { query: 'coffee', limit: 3 }, headers: { 'Idempotency-Key': 'race-1' } });
  assert.is(r.status, 409);
  assert.is((await s.ledger.balance(s.demo.account)).balanceMicro, balance);
  s.ledger.idempotencyAbort(s.demo.account, 'race-1');
  assert.is((await call('POST', '/search', { body: { query: 'coffee', limit: 3 }, headers: { 'Idempotency-Key': 'race-1' } })).status, 200);
});

test('answer cache: an identical request (same analysed terms, limit, window) reuses the answer, and is billed and recorded on its own', async () => {
  const cache = s.answerCache;
  assert.ok(cache.enabled);
  const usageBefore = (await call('GET', '/usage?limit=100')).json;
  const before = await s.ledger.balance(s.demo.account);
  const hits = cache.hits;
  const first = await call('POST', '/search', { body: { query: 'EV battery recall', limit: 7, window: 'all' } });
  assert.is(first.status, 200, JSON.stringify(first.json));
  assert.is(cache.hits, hits);
  // The same terms, written differently: case, a stop word, spacing.
  const again = await call('POST', '/search', { body: { query: 'the ev   BATTERY recall', limit: 7, window: 'all' } });
  assert.is(again.status, 200);
  assert.is(cache.hits, hits + 1);
  assert.equal(again.json.content, first.json.content);
  assert.equal(again.json.narratives, first.json.narratives);
  assert.equal(again.json.creators, first.json.creators);
  assert.is(again.json.query, 'the ev   BATTERY recall');
  assert.is.not(again.json.request_id, first.json.request_id);
  // Both calls charged the rows they returned, each with its own settlement in the usage ledger.
  const rowsCharged = (first.json.content.length + again.json.content.length) * toMicro('0.01');
  assert.is(before.balanceMicro - (await s.ledger.balance(s.demo.account)).balanceMicro, rowsCharged);
  assert.is(again.headers.get('x-service-credits-used'), String((again.json.content.length * toMicro('0.01')) / 1e6));
  const usage = (await call('GET', '/usage?limit=100')).json;
  const newSettlements = usage.entries.filter((e: any) => e.type === 'settlement' && !usageBefore.entries.some((b: any) => b.id === e.id));
  assert.equal(newSettlements.map((e: any) => e.ref).sort(), [first.json.request_id, again.json.request_id].sort());
  // Another limit or window is another request.
  assert.is((await call('POST', '/search', { body: { query: 'EV battery recall', limit: 6, window: 'all' } })).status, 200);
  assert.is((await call('POST', '/search', { body: { query: 'EV battery recall', limit: 7, window: '7d' } })).status, 200);
  assert.is(cache.hits, hits + 1);
  // An emergent narrative of the reused answer is readable by its id.
  const em = again.json.narratives.find((n: any) => n.source === 'emergent');
  assert.ok(em, 'the reused answer has an emergent narrative');
  assert.is((await call('GET', `/narratives/${em.id}`)).status, 200);
});

test('hot swap: a new generation is served without a restart, warmed up first; the old one is released', async () => {
  const before = (await call('GET', '/health')).json.generation;
  const body = { query: 'EV battery recall', limit: 7, window: 'all' };
  const old = (await call('POST', '/search', { body })).json;
  assert.ok(s.answerCache.entries > 0);
  await runPipeline(dir, ['publish']);
  await s.snapshots.refresh();
  const h = await call('GET', '/health');
  assert.is.not(h.json.generation, before);
  assert.is(h.json.draining_generations, 0);
  // No answer of the old generation is left: the cache holds the warm-up's, built on the new one
  // from the searches this server answered (each distinct search once).
  const warm = h.json.search.warm_up;
  assert.is(warm.generation, h.json.generation);
  assert.ok(warm.searches > 1 && warm.searches === warm.of && warm.failed === 0, JSON.stringify(warm));
  assert.is(s.answerCache.entries, warm.searches);
  const hits = s.answerCache.hits;
  const again = await call('POST', '/search', { body });
  assert.is(again.status, 200);
  assert.is(s.answerCache.hits, hits + 1, 'the first request on the new generation is answered from the warm-up');
  assert.equal(again.json.content, old.content, 'the same rows (the generation republished the same data)');
  const emergent = (r: any) => r.narratives.filter((n: any) => n.source === 'emergent').map((n: any) => n.id);
  assert.ok(emergent(old).length > 0);
  // Emergent ids derive from the generation: the cached answer was built on the new one.
  assert.ok(
    emergent(again.json).every((id: string) => !emergent(old).includes(id)),
    'built on the new generation',
  );
  assert.is((await call('POST', '/search', { body: { query: 'coffee', limit: 3 } })).status, 200);
});

test('SEARCH_THREADS=0: the main thread answers by itself, with the answer the workers gave', async () => {
  const body = { query: 'EV battery recall', limit: 20, window: 'all' };
  const viaWorkers = await call('POST', '/search', { body });
  assert.is(viaWorkers.status, 200);
  await s.close();
  s = await server({ SEARCH_THREADS: '0', SEARCH_CACHE_MB: '0' });
  assert.is(s.searchPool, null);
  const here = await call('POST', '/search', { body });
  assert.is(here.status, 200, JSON.stringify(here.json));
  assert.ok(here.json.content.length > 0);
  assert.equal(here.json.content, viaWorkers.json.content);
  assert.equal((await call('GET', '/health')).json.search.answer_workers, 0);
});

test.run();
