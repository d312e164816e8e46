// The search engine's bounds: the worker pool holds at most SEARCH_QUEUE_MAX searches (one more is
// the 503 with Retry-After, its hold released, nothing charged), and what the engine takes and
// gives is asserted at its boundary (limit, window, a generation it loaded). The queue is filled
// deterministically: one answer worker, a queue of one, and a first search parked at a failpoint
// in that worker (the worker reads FAILPOINTS when it starts; this thread read it at import,
// before it was set, so only the first workers park, not their replacements).
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { AssertionFailed } from '../../core/infra/assert.ts';
import { generationDir, readCurrent } from '../../core/snapshots/generations.ts';
import { dataDirLayout } from '../../core/infra/data-dir.ts';
import { pollUntil } from '../../core/infra/wait-at-most.ts';
import { analyseSearch, type SearchParams } from '../../core/ranking/search.ts';
import type { RunningServer } from '../../serve/server.ts';
import { InThreadEngine } from '../../serve/search/in-thread-engine.ts';
import type { SearchEngine } from '../../serve/search/search-engine.ts';
import type { LoadedGeneration } from '../../serve/generation/loaded-generation.ts';
import { callApi } from '../helpers/http.ts';
import { pipedSampleDir } from '../helpers/pipeline.ts';
import { testServer } from '../helpers/server.ts';
import { cleanupTmp, tmpDir } from '../helpers/tmp.ts';

const PARKED = 'search.answer-worker';
let s: RunningServer;
let dir: string;
let fpDir: string;

const search = (body: unknown, headers: Record<string, string> = {}) =>
  callApi(s.baseUrl, s.demo.secret, 'POST', '/search', { body, headers });

test.before(async () => {
  dir = await pipedSampleDir();
  fpDir = tmpDir('ci-failpoints-');
  process.env.FAILPOINTS = PARKED;
  process.env.FAILPOINT_DIR = fpDir;
  try {
    // A budget no search reaches: the parked one stays a search instead of being handed to a job.
    s = await testServer(dir, { SEARCH_THREADS: '1', SEARCH_QUEUE_MAX: '1', SEARCH_BUDGET_MS: '600000', SEARCH_CACHE_MB: '0' });
  } finally {
    delete process.env.FAILPOINTS;
  }
});

test.after(async () => {
  await s?.close();
  cleanupTmp();
});

test('a full search queue: 503 with Retry-After saying so, its hold released, nothing charged, its Idempotency-Key free again', async () => {
  const before = await s.ledger.balance(s.demo.account);
  const parked = search({ query: 'coffee', limit: 10, window: 'all' });
  await pollUntil('the first search parked in its answer worker', () => fs.existsSync(path.join(fpDir, PARKED)), 30_000);
  assert.is((await s.ledger.openHolds()).length, 1, "the parked search's hold");

  const full = await search({ query: 'sourdough starter', limit: 20, window: '30d' }, { 'Idempotency-Key': 'queue-full-1' });
  assert.is(full.status, 503, JSON.stringify(full.json));
  assert.match(full.json.error, /search queue is full/);
  assert.ok(typeof full.json.request_id === 'string' && full.json.request_id.length > 0);
  assert.is(full.headers.get('retry-after'), '1');
  assert.is(full.headers.get('x-service-credits-used'), null, 'nothing charged');
  assert.is((await s.ledger.openHolds()).length, 1, 'no hold left by the refused search');
  assert.is((await s.ledger.balance(s.demo.account)).balanceMicro, before.balanceMicro);

  // The parked search's worker is stopped: that search fails (its hold released), a replacement answers.
  const pool = s.searchPool!;
  const restarts = pool.restarts;
  await pool.workers[1]!.terminate();
  assert.is((await parked).status, 500);
  await pollUntil('the answer worker replaced', () => pool.restarts > restarts, 30_000);
  await pool.allReady();
  const again = await search({ query: 'sourdough starter', limit: 20, window: '30d' }, { 'Idempotency-Key': 'queue-full-1' });
  assert.is(again.status, 200, JSON.stringify(again.json));
  assert.is(again.headers.get('idempotent-replayed'), null, 'the key was free: a first answer, not a replay');
  assert.is((await s.ledger.openHolds()).length, 0);
});

/** `engine.search` refused at the engine's boundary with an AssertionFailed naming `what`. */
async function refused(engine: SearchEngine, gen: LoadedGeneration, p: SearchParams, what: RegExp): Promise<void> {
  try {
    await engine.search(gen, p);
  } catch (err) {
    assert.instance(err, AssertionFailed);
    assert.match((err as Error).message, what);
    return;
  }
  assert.unreachable(`${JSON.stringify(p)} was searched`);
}

test("the engine's boundary: a limit of 1..300, a known window, a generation it loaded (in-thread and pool alike)", async () => {
  const here = new InThreadEngine();
  const gen = await here.load(generationDir(dataDirLayout(dir), (await readCurrent(dataDirLayout(dir)))!), null);
  const ok = { query: 'coffee', limit: 10, window: 'all' } as const;
  assert.ok((await here.search(gen, ok)).ranked.length > 0);
  for (const engine of [here, s.searchEngine]) {
    const served = engine === here ? gen : s.snapshots.generation!;
    await refused(engine, served, { ...ok, limit: 0 }, /search limit = 0/);
    await refused(engine, served, { ...ok, limit: 301 }, /search limit = 301/);
    await refused(engine, served, { ...ok, window: '1y' as never }, /search window 1y/);
    const answer = engine.answer(served, { params: { ...analyseSearch(ok), limit: 1000 }, patterns: false });
    await answer.then(
      () => assert.unreachable('an answer over the limit'),
      (err: Error) => assert.instance(err, AssertionFailed),
    );
  }
  // A generation the engine did not load, or has let go.
  await refused(s.searchEngine, gen, ok, /is not loaded in the search engine/);
  await here.dispose(gen);
  await refused(here, gen, ok, /is not loaded in the search engine/);
});

test.run();
