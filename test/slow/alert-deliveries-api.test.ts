// The delivery routes through the real server (docs/api.md, "Webhook deliveries"): the delivery
// log of a watch whose receiver answered 500 then 200, its limit and bad parameters; redelivery on
// request (the same event id again), of an unknown event a 404; a watch paused after a whole retry
// window of failures shows why, refuses a redelivery with 409, and POST /alerts/{id}/resume
// delivers the events that waited; another account's watch is a 404 on every route; the MCP tools
// call the same routes.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { pollUntil } from '../../core/infra/wait-at-most.ts';
import type { DeliveryAttempt, Watch } from '../../serve/alerts/alert-model.ts';
import type { RunningServer } from '../../serve/server.ts';
import { eventFor, startReceiver, type Receiver } from '../helpers/alerts.ts';
import { callApi } from '../helpers/http.ts';
import { pipedSampleDir } from '../helpers/pipeline.ts';
import { testServer } from '../helpers/server.ts';
import { cleanupTmp } from '../helpers/tmp.ts';

let s: RunningServer;
let rec: Receiver;
/** Per URL path: 'fail' answers 500 always, 'flaky' 500 on an event's first request. */
const mode = new Map<string, 'ok' | 'fail' | 'flaky'>();

const api = (method: string, p: string, opts: Parameters<typeof callApi>[4] = {}) => callApi(s.baseUrl, s.demo.secret, method, p, opts);

test.before(async () => {
  const dir = await pipedSampleDir();
  rec = await startReceiver((g, nth) => {
    const m = mode.get(String(JSON.parse(g.body).watch_id)) ?? 'ok';
    return m === 'fail' || (m === 'flaky' && nth === 0) ? 500 : 200;
  });
  s = await testServer(dir, {
    ALERTS_ALLOW_PRIVATE: '1',
    ALERTS_RETRY_BASE_MS: '50',
    ALERTS_RETRY_WINDOW_MS: '1500',
    ALERTS_TIMEOUT_MS: '1000',
  });
});

test.after(async () => {
  await s?.close();
  await rec?.close();
  cleanupTmp();
});

async function newWatch(m: 'ok' | 'fail' | 'flaky'): Promise<Watch> {
  const made = await api('POST', '/alerts', { body: { target: { kind: 'any' }, conditions: { new_narrative: true }, url: rec.url } });
  assert.is(made.status, 201, JSON.stringify(made.json));
  mode.set(made.json.watch.id, m);
  return made.json.watch as Watch;
}

const statusesOf = async (w: Watch) =>
  ((await api('GET', `/alerts/${w.id}`)).json.events as Array<{ status: string }>).map((e) => e.status);

test('GET /alerts/{id}/deliveries: every attempt, newest first, with status, latency and outcome; a limit; bad parameters are 400s', async () => {
  const w = await newWatch('flaky');
  const events = [eventFor(w, 1), eventFor(w, 2)];
  await s.alerts.outbox.add(events);
  await pollUntil('both delivered', async () => (await statusesOf(w)).join() === 'delivered,delivered', 20_000);
  const log = await api('GET', `/alerts/${w.id}/deliveries`);
  assert.is(log.status, 200);
  assert.is(log.json.watch_id, w.id);
  assert.is(log.json.paused, null);
  assert.is(log.json.limit, 50);
  const items = log.json.items as DeliveryAttempt[];
  assert.is(items.length, 4);
  assert.equal(items.map((a) => a.outcome).sort(), ['delivered', 'delivered', 'retry', 'retry']);
  for (const a of items) assert.ok(a.latency_ms >= 0 && typeof a.at === 'string');
  assert.ok(
    items.every((a, i) => i === 0 || a.at <= items[i - 1]!.at),
    'newest first',
  );
  const first = items.find((a) => a.outcome === 'retry')!;
  assert.equal([first.attempt, first.status], [1, 500]);
  assert.match(first.error!, /^HTTP 500/);
  assert.is((await api('GET', `/alerts/${w.id}/deliveries?limit=1`)).json.items.length, 1);
  for (const q of ['limit=0', 'limit=201', 'limit=x']) {
    const bad = await api('GET', `/alerts/${w.id}/deliveries?${q}`);
    assert.is(bad.status, 400, q);
    assert.match(bad.json.error, /limit must be/);
  }
  // A malformed id is a 400 on every /alerts/{id} route, not a 404.
  for (const [method, route] of [
    ['GET', '/alerts/nope/deliveries'],
    ['GET', '/alerts/nope'],
    ['DELETE', '/alerts/nope'],
    ['POST', '/alerts/nope/resume'],
    ['POST', '/alerts/nope/events/evt_x/redeliver'],
    ['GET', `/alerts/alw_${'x'.repeat(201)}`],
  ] as const) {
    const badId = await api(method, route);
    assert.equal([badId.status, badId.json.error], [400, 'id must be a alw_... id'], `${method} ${route}`);
  }
});

test('POST /alerts/{id}/events/{event_id}/redeliver sends the event again with the same id; an unknown event is a 404', async () => {
  const w = await newWatch('ok');
  const e = eventFor(w, 1);
  await s.alerts.outbox.add([e]);
  await pollUntil('delivered', async () => (await statusesOf(w))[0] === 'delivered', 20_000);
  const again = await api('POST', `/alerts/${w.id}/events/${e.id}/redeliver`);
  assert.is(again.status, 202);
  // The event itself under `event` (docs/api.md), its delivery state beside it.
  assert.equal([again.json.queued, again.json.event.id, again.json.event.type, again.json.status], [true, e.id, e.type, 'pending']);
  await pollUntil('the second delivery', () => rec.of(e.id).length === 2, 20_000);
  assert.is(rec.of(e.id)[1]!.headers['x-alert-event-id'], e.id);
  await pollUntil('delivered again', async () => (await statusesOf(w))[0] === 'delivered', 20_000);
  const none = await api('POST', `/alerts/${w.id}/events/evt_unknown/redeliver`);
  assert.is(none.status, 404);
  assert.match(none.json.error, /has no event evt_unknown/);
  assert.is((await api('POST', `/alerts/${w.id}/events/not-an-id/redeliver`)).status, 400);
});

test('a watch failing for a whole retry window is paused and says why; redelivery is a 409; resume delivers what waited', async () => {
  const w = await newWatch('fail');
  const events = [eventFor(w, 1), eventFor(w, 2)];
  await s.alerts.outbox.add(events);
  await pollUntil('the watch paused', async () => (await api('GET', `/alerts/${w.id}`)).json.watch.paused !== null, 20_000);
  const shown = (await api('GET', `/alerts/${w.id}`)).json;
  assert.match(shown.watch.paused.reason, /every delivery failed/);
  assert.ok((await api('GET', '/alerts')).json.items.find((x: Watch) => x.id === w.id).paused, 'the list shows it paused');
  await pollUntil('both events waiting', async () => (await statusesOf(w)).every((x) => x === 'paused'), 20_000);
  assert.ok((await api('GET', `/alerts/${w.id}/deliveries`)).json.items.some((a: DeliveryAttempt) => a.outcome === 'gave_up'));
  const refused = await api('POST', `/alerts/${w.id}/events/${events[0]!.id}/redeliver`);
  assert.is(refused.status, 409);
  assert.match(refused.json.error, /is paused .*resume/);
  mode.set(w.id, 'ok');
  const resumed = await api('POST', `/alerts/${w.id}/resume`);
  assert.is(resumed.status, 200);
  assert.equal([resumed.json.was_paused, resumed.json.queued, resumed.json.watch.paused], [true, 2, null]);
  await pollUntil('what waited delivered', async () => (await statusesOf(w)).join() === 'delivered,delivered', 20_000);
  assert.is((await api('GET', `/alerts/${w.id}`)).json.watch.paused, null);
  // Resuming a watch that is not paused queues nothing.
  assert.equal((await api('POST', `/alerts/${w.id}/resume`)).json.queued, 0);
});

test("another account's watch is a 404 on every delivery route", async () => {
  const w = await newWatch('ok');
  const e = eventFor(w, 1);
  await s.alerts.outbox.add([e]);
  const other = await s.ledger.createAccount('other');
  const key = (await s.ledger.createKey(other.id)).secret;
  for (const [method, p] of [
    ['GET', `/alerts/${w.id}/deliveries`],
    ['POST', `/alerts/${w.id}/events/${e.id}/redeliver`],
    ['POST', `/alerts/${w.id}/resume`],
  ] as const) {
    const r = await api(method, p, { key });
    assert.is(r.status, 404, `${method} ${p}`);
    assert.match(r.json.error, /no watch alw_/);
  }
  assert.is((await api('GET', `/alerts/${w.id}/deliveries`, { key: null })).status, 403, 'behind the API key');
});

test.run();
