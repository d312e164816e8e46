// Every number of docs/api.md "Billing and limits" and docs/jobs.md for jobs, exactly: prices, holds, charges, floors, default depths,
// the maximum costs of 8.3.5, maxLimitForWindow, and the cache windows (with an injected clock).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { WINDOW_KEYS } from '../../core/snapshots/windows.ts';
import { asMicro, toCredits, toMicro, type Micro } from '../../ledger/money.ts';
import { cacheKey, expiryOf, JobCache, normaliseQuery } from '../../serve/jobs/job-cache.ts';
import {
  chargeFor,
  holdAmount,
  INSIGHTS_DEPTH_DEFAULT,
  maxLimitFor,
  parseJobRequest,
  SIGNALS_FLOOR,
  tierOf,
} from '../../serve/jobs/job-request.ts';

const credits = (micro: Micro) => toCredits(micro);

test('prices and limits', () => {
  const r = (body: object) => parseJobRequest({ query: 'q', ...body });
  assert.is(credits(chargeFor(r({ kind: 'records', limit: 100 }), 40)), 0.4);
  assert.is(credits(chargeFor(r({ kind: 'insights', limit: 100 }), 100)), 1.5);
  assert.is(credits(chargeFor(r({ kind: 'insights', window: '7d', includeSignals: true }), 375)), 6.625);
  assert.is(credits(chargeFor(r({ kind: 'patterns' }), 0)), 10);
  assert.is(credits(chargeFor(r({ kind: 'stats' }), 0)), 5);
  assert.is(chargeFor(r({ kind: 'records' }), 0), 0);
  assert.is(chargeFor(r({ kind: 'insights' }), 0), 0);
  assert.equal(SIGNALS_FLOOR, { '7d': 375, '30d': 750, '90d': 750, all: 1500 });
  assert.equal(INSIGHTS_DEPTH_DEFAULT, { '7d': 1500, '30d': 3000, '90d': 3000, all: 3000 });
  assert.is(tierOf('insights'), '2');
  for (const k of ['records', 'patterns', 'stats'] as const) assert.is(tierOf(k), '1');
  // Price never depends on window.
  for (const w of WINDOW_KEYS) assert.is(holdAmount(r({ kind: 'records', limit: 250, window: w })), toMicro('2.5'));
});

test('maximum costs', () => {
  assert.is(credits(holdAmount(parseJobRequest({ kind: 'records', query: 'q', limit: 1000 }))), 10);
  assert.is(credits(holdAmount(parseJobRequest({ kind: 'insights', query: 'q', window: '7d' }))), 22.5);
  for (const window of ['30d', '90d', 'all']) {
    assert.is(credits(holdAmount(parseJobRequest({ kind: 'insights', query: 'q', window }))), 45);
    assert.is(credits(holdAmount(parseJobRequest({ kind: 'insights', query: 'q', window, includeSignals: true }))), 46);
  }
  // Charges never exceed the hold: the whole depth analysed, signals given.
  const full = parseJobRequest({ kind: 'insights', query: 'q', window: 'all', includeSignals: true });
  assert.is(chargeFor(full, full.limit), holdAmount(full));
});

test('400s of the submit body: the signals floor for an explicit limit, undeclared fields, signals on other kinds', () => {
  assert.throws(() => parseJobRequest({ kind: 'insights', query: 'q', window: '7d', limit: 374, includeSignals: true }), /375/);
  assert.not.throws(() => parseJobRequest({ kind: 'insights', query: 'q', window: '7d', limit: 375, includeSignals: true }));
  assert.not.throws(() => parseJobRequest({ kind: 'insights', query: 'q', window: '7d', limit: 10 }));
  assert.throws(() => parseJobRequest({ kind: 'records', query: 'q', includeSignals: false }), /insights jobs only/);
  assert.throws(() => parseJobRequest({ kind: 'records', query: 'q', depth: 5 }), /unknown field "depth"/);
  assert.throws(() => parseJobRequest({ kind: 'records', query: 'q', limit: 10_001 }), /at most 10000/);
});

test('maxLimitForWindow: the largest limit covered; 0 for flat kinds and under the insights minimum depth', () => {
  const r = (body: object) => parseJobRequest({ query: 'q', ...body });
  assert.is(maxLimitFor(r({ kind: 'records' }), toMicro('3.999')), 399);
  assert.is(maxLimitFor(r({ kind: 'records' }), toMicro('1000')), 10_000);
  // The window's minimum depth (the window's floor) applies with or without includeSignals.
  for (const window of ['7d', '30d']) assert.is(maxLimitFor(r({ kind: 'insights', window }), toMicro('3')), 0, `3 credits, ${window}`);
  assert.is(maxLimitFor(r({ kind: 'insights', window: '7d' }), toMicro('10')), 666);
  assert.is(maxLimitFor(r({ kind: 'insights', window: '30d' }), toMicro('10')), 0, '666 records are under the 30d floor of 750');
  assert.is(maxLimitFor(r({ kind: 'insights', window: '30d' }), toMicro('11.25')), 750);
  assert.is(maxLimitFor(r({ kind: 'insights', window: '7d' }), toMicro('5.624')), 0, '374 records are under the 7d floor of 375');
  assert.is(maxLimitFor(r({ kind: 'insights', window: 'all' }), toMicro('22.5')), 1500);
  assert.is(maxLimitFor(r({ kind: 'insights' }), toMicro('0.01')), 0);
  assert.is(maxLimitFor(r({ kind: 'insights', window: '7d', includeSignals: true }), toMicro('6.625')), 375);
  assert.is(maxLimitFor(r({ kind: 'insights', window: '7d', includeSignals: true }), toMicro('6.62')), 0);
  assert.is(maxLimitFor(r({ kind: 'patterns' }), toMicro('100')), 0);
  assert.is(maxLimitFor(r({ kind: 'stats' }), toMicro('100')), 0);
});

test('cache windows: records 15 min and insights 1 h rolling; patterns and stats until 00:00 UTC', () => {
  let now = Date.parse('2026-11-21T10:00:00Z');
  const cache = new JobCache(() => now);
  const put = (kind: 'records' | 'insights' | 'patterns' | 'stats') => {
    const key = cacheKey(parseJobRequest({ kind, query: 'Coffee  News' }), 'g1');
    cache.put({ key, kind, jobId: `job_${kind}`, payer: 'a', chargedMicro: asMicro(1), delivered: 1 });
    return key;
  };
  const rec = put('records');
  const ins = put('insights');
  const st = put('stats');
  assert.is(cacheKey(parseJobRequest({ kind: 'records', query: ' coffee news ' }), 'g1'), rec, 'the query is compared normalised');
  assert.is.not(cacheKey(parseJobRequest({ kind: 'records', query: 'coffee news' }), 'g2'), rec, 'another generation is another entry');
  assert.is(normaliseQuery('  Ｃoffee\tNEWS '), 'coffee news');
  now += 14 * 60_000;
  const hit = cache.get(rec)!;
  cache.touch(hit); // a hit at 10:14 keeps it to 10:29
  now += 14 * 60_000; // 10:28
  assert.ok(cache.get(rec), 'rolling: still there 28 minutes after it was made');
  now += 2 * 60_000; // 10:30
  assert.is(cache.get(rec), null);
  assert.ok(cache.get(ins), 'insights: within its hour');
  now = Date.parse('2026-11-21T11:00:00Z');
  assert.is(cache.get(ins), null, 'insights: an hour after it was made, untouched');
  assert.ok(cache.get(st), 'stats: all day');
  now = Date.parse('2026-11-21T23:59:59Z');
  assert.ok(cache.get(st));
  cache.touch(cache.get(st)!); // not rolling: a hit does not extend it
  now = Date.parse('2026-11-22T00:00:00Z');
  assert.is(cache.get(st), null, 'stats: gone at 00:00 UTC');
  assert.is(expiryOf('patterns', Date.parse('2026-11-21T00:00:00Z')), Date.parse('2026-11-22T00:00:00Z'));
});

test.run();
