// A swap users don't feel (docs/operations.md, "Serving"): the server loads a new generation off
// its serving threads and warms it up with the most recent distinct searches it answered (at most
// SWAP_WARM_UP_SEARCHES), unbilled, before it switches; searches keep answering on the old
// generation meanwhile, and the first requests on the new one find the warm-up's answers.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { pollUntil } from '../../core/infra/wait-at-most.ts';
import { analyseSearch } from '../../core/ranking/search.ts';
import { toMicro } from '../../ledger/money.ts';
import type { RunningServer } from '../../serve/server.ts';
import { callApi } from '../helpers/http.ts';
import { pipedSampleDir, runPipeline } from '../helpers/pipeline.ts';
import { testServer } from '../helpers/server.ts';
import { cleanupTmp } from '../helpers/tmp.ts';

const WARM_UP = 6;
let s: RunningServer;
let dir: string;

test.before(async () => {
  dir = await pipedSampleDir();
  // No timer: the test swaps when it means to.
  s = await testServer(dir, {
    SWAP_WARM_UP_SEARCHES: String(WARM_UP),
    // A budget no run here reaches: every search of the set is replayed.
    SWAP_WARM_UP_MS: '300000',
    SNAPSHOT_CHECK_MS: '3600000',
    DEMO_CREDITS: '1000',
  });
});

test.after(async () => {
  await s?.close();
  cleanupTmp();
});

const QUERIES = [
  'coffee',
  'sourdough bread',
  'music festival',
  'EV battery recall',
  'sunset photo',
  'recipe video',
  'teal waves',
  'pastel',
  'football',
];
const bodyOf = (q: string) => ({ query: q, limit: 20, window: 'all' as const });

test('the switch waits for the warm-up of the recent searches; the old generation answers meanwhile; unbilled; warm answers after', async () => {
  const search = (key: string, q: string) => callApi(s.baseUrl, key, 'POST', '/search', { body: bodyOf(q) });
  for (const q of QUERIES) assert.is((await search(s.demo.secret, q)).status, 200, q);
  // Asked again (the same analysed terms): the most recent, still one search of the set.
  assert.is((await search(s.demo.secret, 'the Coffee')).status, 200);
  // The warm-up set: coffee, then the last five others; the first three are out of it.
  const warmSet = ['coffee', ...QUERIES.slice(-(WARM_UP - 1))];
  const cold = QUERIES.slice(1, QUERIES.length - (WARM_UP - 1));

  const other = await s.ledger.createAccount('load');
  const { secret } = await s.ledger.createKey(other.id, 'k');
  await s.ledger.topup(other.id, toMicro('1000'));
  const demoBefore = await s.ledger.balance(s.demo.account);
  const usageBefore = (await callApi(s.baseUrl, s.demo.secret, 'GET', '/usage?limit=100')).json.entries.length;

  const before = (await callApi(s.baseUrl, s.demo.secret, 'GET', '/health')).json.generation;
  await runPipeline(dir, ['publish']);
  // What the server holds the instant it switches (listeners run right after the assignment, the answer cache's first).
  const atSwap: Array<{ generation: string; cached: number }> = [];
  s.snapshots.onSwap((gen) => atSwap.push({ generation: gen.id, cached: s.answerCache.entries }));
  atSwap.length = 0;

  // Searches and /health under way through the load (another account; a search already in the warm-up set, so the set stays).
  let swapped = false;
  const seen: Array<{ status: number; generation: string; swapped: boolean }> = [];
  const load = (async () => {
    while (!swapped) {
      const r = await search(secret, 'coffee');
      const h = await callApi(s.baseUrl, secret, 'GET', '/health');
      seen.push({ status: r.status, generation: h.json.generation, swapped });
    }
  })();
  await pollUntil('a search answered before the swap starts', () => seen.length > 0, 30_000, 5);
  const answeredBefore = seen.length;
  await s.snapshots.refresh();
  swapped = true;
  await load;

  const h = (await callApi(s.baseUrl, s.demo.secret, 'GET', '/health')).json;
  assert.is.not(h.generation, before, 'the new generation is served');
  assert.ok(
    seen.every((x) => x.status === 200),
    `statuses ${[...new Set(seen.map((x) => x.status))]}`,
  );
  assert.ok(seen.length > answeredBefore, 'searches answered while the new generation loaded and warmed up');
  // Until the switch, every request saw the old generation (never one half loaded).
  const during = seen.filter((x) => !x.swapped);
  assert.ok(
    during.slice(0, -1).every((x) => x.generation === before),
    `generations seen during the load: ${[...new Set(during.map((x) => x.generation))]}`,
  );

  // The switch came after the warm-up: at that instant the answer cache held its answers, built on the new generation.
  assert.equal(
    atSwap.map((x) => [x.generation, x.cached]),
    [[h.generation, WARM_UP]],
  );
  assert.equal(h.search.warm_up.generation, h.generation);
  assert.is(h.search.warm_up.searches, WARM_UP);
  assert.is(h.search.warm_up.of, WARM_UP);
  assert.is(h.search.warm_up.failed, 0);

  // Unbilled: the demo account's balance and usage are as they were (the load's account paid its own).
  assert.is((await s.ledger.balance(s.demo.account)).balanceMicro, demoBefore.balanceMicro);
  assert.is((await callApi(s.baseUrl, s.demo.secret, 'GET', '/usage?limit=100')).json.entries.length, usageBefore);

  // The warm-up set's searches are answered from its answers on the new generation; the others rank afresh.
  for (const q of warmSet) {
    const hits = s.answerCache.hits;
    assert.is((await search(s.demo.secret, q)).status, 200);
    assert.is(s.answerCache.hits, hits + 1, `${q}: from the warm-up`);
  }
  for (const q of cold) {
    const hits = s.answerCache.hits;
    assert.is((await search(s.demo.secret, q)).status, 200);
    assert.is(s.answerCache.hits, hits, `${q}: not in the warm-up set`);
  }
});

test('the warm answers are the answers: each the same as the search ranked afresh on the new generation', async () => {
  const lease = s.snapshots.lease();
  const text = (x: unknown) => JSON.stringify(x).replace(/"computed_at":"[^"]*"/g, '"computed_at":"-"');
  try {
    for (const q of ['coffee', 'football']) {
      const hits = s.answerCache.hits;
      const warm = (await callApi(s.baseUrl, s.demo.secret, 'POST', '/search', { body: bodyOf(q) })).json;
      assert.is(s.answerCache.hits, hits + 1, `${q}: the warm-up's answer`);
      const fresh = JSON.parse(
        `{${Buffer.from((await s.searchEngine.answer(lease.gen, { params: analyseSearch(bodyOf(q)), patterns: false })).json).toString()}}`,
      );
      for (const part of ['content', 'creators', 'narratives', 'patterns']) assert.is(text(warm[part]), text(fresh[part]), `${q}: ${part}`);
    }
  } finally {
    lease.release();
  }
});

test.run();
