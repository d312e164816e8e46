// Webhook delivery (docs/api.md, "Webhook deliveries") with the file outbox, the real watch store
// and a real receiver on 127.0.0.1: the signed request and its verification as documented, the
// receiver answering 500 then 200, hanging past the timeout, down then back (every event
// delivered, none lost, repeats only with the same event id), the retry schedule and window, the
// pause and the resume, redelivery, a private address refused at delivery, and a delivering
// process killed with SIGKILL (its event delivered after the restart).
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { loadConfig } from '../../core/infra/config.ts';
import { createLogger } from '../../core/infra/log.ts';
import { pollUntil } from '../../core/infra/wait-at-most.ts';
import type { AlertEvent, DeliveryAttempt, DeliveryObserver, Watch } from '../../serve/alerts/alert-model.ts';
import type { WatchStore } from '../../serve/alerts/watch-store.ts';
import { openWebhookOutbox } from '../../serve/alerts/webhook-outbox.ts';
import { MAX_WAIT_MS, nextAttemptAt, retryWait } from '../../serve/alerts/retry-schedule.ts';
import { signatureHeader, signingKey, watchSecret, configuredSigningKey } from '../../serve/alerts/watch-secret.ts';
import { openWatchStore } from '../../serve/alerts/open-watch-store.ts';
import type { WebhookOutbox } from '../../serve/alerts/webhook-outbox.ts';
import { closedPort, eventFor, pythonVerifies, startReceiver, verifyWebhook, watchFor, type Receiver } from '../helpers/alerts.ts';
import { spawnTs } from '../helpers/child.ts';
import { cleanupTmp, tmpDir } from '../helpers/tmp.ts';

const log = createLogger('test', 'silent');
const open: Array<{ close(): Promise<void> }> = [];

test.after.each(async () => {
  for (const c of open.splice(0).reverse()) await c.close();
});
test.after(() => cleanupTmp());

class Counts implements DeliveryObserver {
  readonly by: Record<DeliveryAttempt['outcome'], number> = { delivered: 0, retry: 0, gave_up: 0 };
  attempt(outcome: DeliveryAttempt['outcome']): void {
    this.by[outcome]++;
  }
}

interface Rig {
  dir: string;
  watches: WatchStore;
  outbox: WebhookOutbox;
  counts: Counts;
}

/** The watch store and the outbox of DATA_DIR=dir, opened, with short delivery settings. */
async function rig(dir: string, env: Record<string, string> = {}): Promise<Rig> {
  const config = loadConfig({
    DATA_DIR: dir,
    ALERTS_ALLOW_PRIVATE: '1',
    ALERTS_TIMEOUT_MS: '400',
    ALERTS_RETRY_BASE_MS: '20',
    ALERTS_RETRY_WINDOW_MS: '60000',
    ALERTS_CONCURRENCY: '4',
    ...env,
  });
  const watches = openWatchStore(config, log);
  await watches.open();
  const counts = new Counts();
  const outbox = openWebhookOutbox(config, log, watches, await configuredSigningKey(config), counts);
  await outbox.open();
  open.push(watches, outbox);
  return { dir, watches, outbox, counts };
}

async function addWatch(r: Rig, url: string): Promise<Watch> {
  const w = watchFor(url);
  assert.ok(await r.watches.add(w, 100));
  return w;
}

const statuses = async (r: Rig, w: Watch) => (await r.outbox.events(w.id, 100)).map((e) => e.status);

async function allDelivered(r: Rig, w: Watch, n: number, timeoutMs = 20_000): Promise<void> {
  await pollUntil(
    `${n} events of ${w.id} delivered`,
    async () => {
      const s = await statuses(r, w);
      return s.length === n && s.every((x) => x === 'delivered');
    },
    timeoutMs,
  );
}

/** Every event received, and every request for it carried its own id, body and a valid signature. */
function assertEveryEventReceived(rec: Receiver, events: AlertEvent[], secret: string): void {
  for (const e of events) {
    const got = rec.of(e.id);
    assert.ok(got.length >= 1, `event ${e.id} never received`);
    for (const g of got) {
      assert.equal(JSON.parse(g.body), e);
      assert.ok(verifyWebhook(secret, g.body, String(g.headers['x-alert-signature'])));
    }
  }
  const ids = new Set(events.map((e) => e.id));
  assert.ok(
    rec.received.every((g) => ids.has(String(g.headers['x-alert-event-id']))),
    'a request carried an id of no event',
  );
}

test('a delivery is a signed POST that the documented check accepts, and a changed body or an old timestamp it rejects', async () => {
  const rec = await startReceiver();
  open.push(rec);
  const r = await rig(tmpDir());
  const w = await addWatch(r, rec.url);
  const event = eventFor(w, 1);
  assert.equal(
    (await r.outbox.add([event])).map((e) => e.id),
    [event.id],
  );
  await allDelivered(r, w, 1);
  assert.is(rec.received.length, 1);
  const got = rec.received[0]!;
  const h = got.headers;
  assert.is(h['content-type'], 'application/json');
  assert.match(String(h['user-agent']), /^content-intelligence-webhooks\//);
  assert.is(h['x-alert-event-id'], event.id);
  assert.is(h['x-alert-event-type'], 'narrative.new_narrative');
  assert.equal(JSON.parse(got.body), event);
  const secret = watchSecret(await signingKey(path.join(r.dir, 'alerts'), undefined), w.id, w.secret_version);
  const sig = String(h['x-alert-signature']);
  assert.match(sig, new RegExp(`^t=${h['x-alert-timestamp']},v1=[0-9a-f]{64}$`));
  assert.ok(verifyWebhook(secret, got.body, sig));
  assert.not.ok(verifyWebhook(secret, got.body.replace('narrative 1', 'narrative 2'), sig), 'a changed body must fail');
  assert.not.ok(verifyWebhook(watchSecret(Buffer.from('another key'), w.id, 1), got.body, sig), 'another secret must fail');
  const now = Math.floor(Date.now() / 1000);
  assert.ok(verifyWebhook(secret, got.body, signatureHeader(secret, got.body, now - 250)), 'a timestamp 250 s old is taken');
  assert.not.ok(verifyWebhook(secret, got.body, signatureHeader(secret, got.body, now - 301)), 'one over 5 minutes old is refused');
  assert.not.ok(verifyWebhook(secret, got.body, sig.replace(/v1=./, 'v1=x')), 'a changed signature is refused');
  // The documented Python check agrees (where python3 is installed).
  const py = pythonVerifies(secret, got.body, sig);
  if (py === null) console.log('python3 not found: the Python snippet of docs/api.md was not run');
  else {
    assert.ok(py, 'the Python check takes the delivery');
    assert.not.ok(pythonVerifies(secret, got.body.replace('narrative 1', 'narrative 2'), sig), 'the Python check refuses a changed body');
    assert.not.ok(pythonVerifies(secret, got.body, signatureHeader(secret, got.body, now - 301)), 'and an old timestamp');
  }
  const [state] = await r.outbox.events(w.id, 10);
  assert.is(state!.attempts, 1);
  assert.ok(state!.delivered_at);
  const [attempt] = await r.outbox.attempts(w.id, 10);
  assert.is(attempt!.status, 200);
  assert.is(attempt!.outcome, 'delivered');
  assert.is(attempt!.attempt, 1);
  assert.ok(attempt!.latency_ms >= 0 && attempt!.latency_ms < 400);
  // The observer counts an attempt just after the book settles it: wait for it, bounded.
  await pollUntil('the observer to count the delivery', () => r.counts.by.delivered === 1, 5_000);
  assert.equal(r.counts.by, { delivered: 1, retry: 0, gave_up: 0 });
  // The same event again (another evaluation of the same generation) is not kept twice.
  assert.equal(await r.outbox.add([event]), []);
});

test('a receiver answering 500 twice then 200: every event delivered on its third attempt, repeats with the same id', async () => {
  const rec = await startReceiver((_r, nth) => (nth < 2 ? 500 : 200));
  open.push(rec);
  const r = await rig(tmpDir());
  const w = await addWatch(r, rec.url);
  const events = Array.from({ length: 8 }, (_, i) => eventFor(w, i));
  assert.is((await r.outbox.add(events)).length, 8);
  await allDelivered(r, w, 8);
  for (const e of events) assert.is(rec.of(e.id).length, 3, `event ${e.id} received 3 times`);
  assertEveryEventReceived(rec, events, watchSecret(await signingKey(path.join(r.dir, 'alerts'), undefined), w.id, 1));
  // The observer counts an attempt just after the book settles it: wait for it, bounded.
  await pollUntil('the observer to count every attempt', () => r.counts.by.delivered + r.counts.by.retry >= 24, 5_000);
  assert.equal(r.counts.by, { delivered: 8, retry: 16, gave_up: 0 });
  const log1 = (await r.outbox.attempts(w.id, 100)).filter((a) => a.event_id === events[0]!.id).reverse();
  assert.equal(
    log1.map((a) => [a.attempt, a.status, a.outcome]),
    [
      [1, 500, 'retry'],
      [2, 500, 'retry'],
      [3, 200, 'delivered'],
    ],
  );
  assert.match(log1[0]!.error!, /^HTTP 500: receiver says 500/);
});

test('a receiver hanging past ALERTS_TIMEOUT_MS is a failed attempt, retried', async () => {
  const rec = await startReceiver((_r, nth) => (nth === 0 ? 'hang' : 200));
  open.push(rec);
  const r = await rig(tmpDir(), { ALERTS_TIMEOUT_MS: '300' });
  const w = await addWatch(r, rec.url);
  const events = [eventFor(w, 1), eventFor(w, 2), eventFor(w, 3)];
  await r.outbox.add(events);
  await allDelivered(r, w, 3);
  for (const e of events) assert.is(rec.of(e.id).length, 2);
  const failed = (await r.outbox.attempts(w.id, 100)).filter((a) => a.outcome === 'retry');
  assert.is(failed.length, 3);
  for (const a of failed) {
    assert.is(a.status, null);
    assert.match(a.error!, /no answer within 300 ms/);
    assert.ok(a.latency_ms >= 290, `latency ${a.latency_ms}`);
  }
});

test('a receiver down (closed port) and then back: every event delivered, none lost', async () => {
  const port = await closedPort();
  const r = await rig(tmpDir(), { ALERTS_RETRY_BASE_MS: '50' });
  const w = await addWatch(r, `http://127.0.0.1:${port}/hook`);
  const events = Array.from({ length: 20 }, (_, i) => eventFor(w, i));
  await r.outbox.add(events);
  await pollUntil('two refused attempts per event', async () => (await r.outbox.attempts(w.id, 200)).length >= 40, 20_000);
  assert.ok((await r.outbox.attempts(w.id, 200)).every((a) => a.status === null && /ECONNREFUSED/.test(a.error!)));
  assert.ok((await statuses(r, w)).every((s) => s === 'pending'));
  const rec = await startReceiver(() => 200, port);
  open.push(rec);
  await allDelivered(r, w, 20);
  assert.equal(new Set(rec.received.map((g) => g.headers['x-alert-event-id'])).size, 20);
  // Once delivered, never again: each event reached the receiver exactly once.
  assert.is(rec.received.length, 20);
  // The observer counts an attempt just after the book settles it: wait for it, bounded.
  await pollUntil('the observer to count the deliveries', () => r.counts.by.delivered >= 20, 5_000);
  assert.is(r.counts.by.delivered, 20);
});

test('the retry schedule: waits double from the base, jittered to [half, all], capped at an hour; none past the window', () => {
  assert.is(
    retryWait(1, 10_000, () => 0),
    5_000,
  );
  assert.is(
    retryWait(1, 10_000, () => 1),
    10_000,
  );
  assert.is(
    retryWait(4, 10_000, () => 1),
    80_000,
  );
  assert.is(
    retryWait(4, 10_000, () => 0.5),
    60_000,
  );
  assert.is(
    retryWait(30, 10_000, () => 1),
    MAX_WAIT_MS,
  );
  assert.is(
    retryWait(500, 10_000, () => 0),
    MAX_WAIT_MS / 2,
  );
  const start = new Date('2026-01-01T00:00:00Z');
  const s = { baseMs: 10_000, spanMs: 86_400_000 };
  // The default settings: attempts until 24 h after the event, about 30 of them.
  let now = start;
  let n = 0;
  for (;;) {
    const next = nextAttemptAt(now, start, ++n, s, () => 1);
    if (!next) break;
    assert.ok(next.getTime() - now.getTime() <= MAX_WAIT_MS);
    now = next;
  }
  assert.ok(now.getTime() - start.getTime() <= s.spanMs);
  assert.ok(n >= 25 && n <= 35, `${n} attempts in 24 h`);
  // A receiver down 5 minutes is retried within them: the waits up to then add to less than 5 minutes + one wait.
  assert.is(
    nextAttemptAt(new Date(start.getTime() + 5_000), start, 1, { baseMs: 10_000, spanMs: 10_000 }, () => 1),
    null,
  );
});

test('observed waits between attempts grow as the schedule says', async () => {
  const rec = await startReceiver((_r, nth) => (nth < 4 ? 503 : 200));
  open.push(rec);
  const r = await rig(tmpDir(), { ALERTS_RETRY_BASE_MS: '100' });
  const w = await addWatch(r, rec.url);
  const e = eventFor(w, 1);
  await r.outbox.add([e]);
  await allDelivered(r, w, 1);
  const times = rec.of(e.id).map((g) => g.at);
  assert.is(times.length, 5);
  for (let i = 1; i < times.length; i++) {
    const wait = times[i]! - times[i - 1]!;
    const full = 100 * 2 ** (i - 1);
    assert.ok(wait >= full / 2 - 5, `wait ${i} was ${wait} ms, at least ${full / 2} expected`);
    assert.ok(wait <= full + 400, `wait ${i} was ${wait} ms, about ${full} at most expected`);
  }
});

test('an endpoint failing for a whole retry window: the watch paused with a reason, its events wait; resume delivers them', async () => {
  let up = false;
  const rec = await startReceiver(() => (up ? 200 : 500));
  open.push(rec);
  const r = await rig(tmpDir(), { ALERTS_RETRY_BASE_MS: '50', ALERTS_RETRY_WINDOW_MS: '1000' });
  const w = await addWatch(r, rec.url);
  const first = eventFor(w, 1);
  await r.outbox.add([first]);
  await pollUntil('the watch to be paused', async () => (await r.watches.get(w.id))!.paused !== null, 20_000);
  const paused = (await r.watches.get(w.id))!.paused!;
  assert.match(paused.reason, /every delivery failed for 1 s \(last: HTTP 500/);
  assert.match(paused.reason, /resume/);
  await pollUntil('the event to wait', async () => (await statuses(r, w))[0] === 'paused', 5_000);
  // The observer counts an attempt just after the book settles it: wait for it, bounded.
  await pollUntil('the observer to count the give-up', () => r.counts.by.gave_up >= 1, 5_000);
  assert.is(r.counts.by.gave_up, 1);
  const [last] = await r.outbox.attempts(w.id, 1);
  assert.is(last!.outcome, 'gave_up');
  // An event of a paused watch is kept, waits, and is not sent.
  const second = eventFor(w, 2);
  await r.outbox.add([second]);
  await pollUntil('the new event to wait', async () => (await statuses(r, w)).every((s) => s === 'paused'), 5_000);
  assert.is(rec.of(second.id).length, 0);
  const sentBefore = rec.received.length;
  up = true;
  await r.watches.setPaused(w.id, null);
  assert.is(await r.outbox.resume(w.id), 2);
  await allDelivered(r, w, 2);
  assert.is(rec.of(second.id).length, 1);
  assert.is(rec.received.length, sentBefore + 2);
  assert.is((await r.watches.get(w.id))!.paused, null);
});

test('one event refused for a whole window while the endpoint takes others: that event failed, the watch not paused; redelivered on request', async () => {
  let refuse = true;
  const rec = await startReceiver((g) => (refuse && JSON.parse(g.body).narrative.id === 'n1' ? 400 : 200));
  open.push(rec);
  const r = await rig(tmpDir(), { ALERTS_RETRY_BASE_MS: '50', ALERTS_RETRY_WINDOW_MS: '1000' });
  const w = await addWatch(r, rec.url);
  const bad = eventFor(w, 1);
  const good = eventFor(w, 2);
  await r.outbox.add([bad, good]);
  await pollUntil('the refused event to fail', async () => (await r.outbox.events(w.id, 10)).some((e) => e.status === 'failed'), 20_000);
  assert.equal(
    (await r.outbox.events(w.id, 10)).map((e) => [e.event.id, e.status]),
    [
      [good.id, 'delivered'],
      [bad.id, 'failed'],
    ],
  );
  assert.is((await r.watches.get(w.id))!.paused, null);
  assert.ok(rec.of(bad.id).length >= 2, 'a 400 is retried');
  refuse = false;
  const again = await r.outbox.redeliver(w.id, bad.id);
  assert.is(again!.status, 'pending');
  await allDelivered(r, w, 2);
  // Redelivery of a delivered event sends it once more, same id; an unknown event or another watch's is null.
  const before = rec.of(good.id).length;
  await r.outbox.redeliver(w.id, good.id);
  await pollUntil('the redelivery', () => rec.of(good.id).length === before + 1, 10_000);
  assert.is(await r.outbox.redeliver(w.id, 'evt_nothing'), null);
  assert.is(await r.outbox.redeliver('alw_other', good.id), null);
});

test('a private address is refused at delivery when ALERTS_ALLOW_PRIVATE is not set: nothing reaches it', async () => {
  const rec = await startReceiver();
  open.push(rec);
  const r = await rig(tmpDir(), { ALERTS_ALLOW_PRIVATE: '0', ALERTS_RETRY_BASE_MS: '50' });
  const w = watchFor(rec.url.replace('127.0.0.1', 'localhost'));
  assert.ok(await r.watches.add(w, 100));
  await r.outbox.add([eventFor(w, 1)]);
  await pollUntil('two refused attempts', async () => (await r.outbox.attempts(w.id, 10)).length >= 2, 10_000);
  for (const a of await r.outbox.attempts(w.id, 10)) {
    assert.is(a.status, null);
    assert.match(a.error!, /^refused address: localhost resolves to no public address/);
  }
  assert.is(rec.received.length, 0);
});

test('a private IP literal is refused at delivery too (no lookup runs for it): loopback, mapped, private, link-local', async () => {
  const rec = await startReceiver();
  open.push(rec);
  const port = new URL(rec.url).port;
  const r = await rig(tmpDir(), { ALERTS_ALLOW_PRIVATE: '0', ALERTS_RETRY_BASE_MS: '50' });
  // Watches as a store holds them after creation under ALERTS_ALLOW_PRIVATE=1 (the routes' check is not run).
  const urls = [
    rec.url,
    `http://[::ffff:127.0.0.1]:${port}/hook`,
    `http://[::ffff:7f00:1]:${port}/hook`,
    `http://[::1]:${port}/hook`,
    `http://2130706433:${port}/hook`,
    'http://10.1.2.3/hook',
    'http://169.254.169.254/latest/meta-data/',
    'http://[fd00::1]/hook',
  ];
  const watches = urls.map((u, i) => ({ ...watchFor(u), id: `alw_literal${i}` }));
  for (const w of watches) assert.ok(await r.watches.add(w, 100));
  await r.outbox.add(watches.map((w) => eventFor(w, 1)));
  for (const w of watches) {
    await pollUntil(`two refused attempts to ${w.url}`, async () => (await r.outbox.attempts(w.id, 10)).length >= 2, 10_000);
    for (const a of await r.outbox.attempts(w.id, 10)) {
      assert.is(a.status, null, w.url);
      assert.match(a.error!, /^refused address: .* is not a public address$/, `${w.url}: ${a.error}`);
    }
  }
  assert.is(rec.received.length, 0);
  // Allowed, the same literal is delivered to.
  const allowed = await rig(tmpDir(), { ALERTS_ALLOW_PRIVATE: '1' });
  const w = watchFor(rec.url);
  assert.ok(await allowed.watches.add(w, 100));
  await allowed.outbox.add([eventFor(w, 2)]);
  await pollUntil('the delivery', () => rec.received.length === 1, 10_000);
});

test('the file outbox across a restart: history kept, pending events queued again and delivered', async () => {
  const dir = tmpDir();
  const port = await closedPort();
  const r1 = await rig(dir, { ALERTS_RETRY_BASE_MS: '50' });
  const w = await addWatch(r1, `http://127.0.0.1:${port}/hook`);
  const events = Array.from({ length: 5 }, (_, i) => eventFor(w, i));
  await r1.outbox.add(events);
  await pollUntil('a failed attempt per event', async () => (await r1.outbox.attempts(w.id, 100)).length >= 5, 10_000);
  for (const c of open.splice(0).reverse()) await c.close();
  const attemptsBefore = (await r1.outbox.attempts(w.id, 200)).length;
  const rec = await startReceiver(() => 200, port);
  open.push(rec);
  // Their retries are queued again at their time.
  const r2 = await rig(dir);
  await allDelivered(r2, w, 5, 30_000);
  const attempts = await r2.outbox.attempts(w.id, 200);
  assert.ok(attempts.length >= attemptsBefore + 5);
  assert.is(new Set(rec.received.map((g) => g.headers['x-alert-event-id'])).size, 5);
});

test('the file outbox keeps a watch newest 100 events (and every waiting one) and its journal compacts', async () => {
  const rec = await startReceiver();
  open.push(rec);
  const dir = tmpDir();
  const r = await rig(dir);
  const w = await addWatch(r, rec.url);
  for (let b = 0; b < 4; b++) {
    await r.outbox.add(Array.from({ length: 50 }, (_, i) => eventFor(w, b * 50 + i)));
    await pollUntil('the batch delivered', async () => (await statuses(r, w)).every((s) => s === 'delivered'), 20_000);
  }
  const kept = await r.outbox.events(w.id, 500);
  assert.ok(kept.length >= 100 && kept.length <= 150, `${kept.length} kept`);
  assert.is(kept[0]!.event.id, eventFor(w, 199).id);
  for (const c of open.splice(0).reverse()) await c.close();
  const again = await rig(dir);
  assert.equal(
    (await again.outbox.events(w.id, 500)).map((e) => e.event.id),
    kept.map((e) => e.event.id),
  );
  const lines = fs
    .readFileSync(path.join(dir, 'alerts', 'outbox', 'journal.jsonl'), 'utf8')
    .trim()
    .split('\n');
  assert.ok(lines.length >= 200, 'nothing to compact yet below 10,000 lines');
});

test('a delivering process killed with SIGKILL mid-delivery: the event is delivered after the restart', async () => {
  const dir = tmpDir();
  let hang = true;
  const rec = await startReceiver(() => (hang ? 'hang' : 200));
  open.push(rec);
  const watches = openWatchStore(loadConfig({ DATA_DIR: dir }), log);
  await watches.open();
  const w = watchFor(rec.url);
  await watches.add(w, 100);
  await watches.close();
  const event = eventFor(w, 1);
  const eventsFile = path.join(dir, 'events.json');
  fs.writeFileSync(eventsFile, JSON.stringify([event]));
  const env = { DATA_DIR: dir, ALERTS_ALLOW_PRIVATE: '1', ALERTS_TIMEOUT_MS: '30000', ALERTS_RETRY_BASE_MS: '50', LOG_LEVEL: 'info' };
  const first = spawnTs('test/helpers/delivery-child.ts', [], { ...env, EVENTS_FILE: eventsFile });
  await pollUntil('the first attempt to reach the receiver', () => rec.of(event.id).length === 1 || first.proc.exitCode !== null, 60_000);
  assert.match(first.out(), /"added":1/);
  first.proc.kill('SIGKILL');
  assert.is((await first.exited).signal, 'SIGKILL');
  hang = false;
  const second = spawnTs('test/helpers/delivery-child.ts', [], env);
  try {
    await pollUntil('the event after the restart', () => rec.of(event.id).length === 2 || second.proc.exitCode !== null, 60_000);
    assert.is(rec.of(event.id).length, 2, second.out());
  } finally {
    second.proc.kill('SIGTERM');
    await second.exited;
  }
  const r = await rig(dir);
  const [state] = await r.outbox.events(w.id, 10);
  assert.is(state!.status, 'delivered');
  assert.is(state!.attempts, 1);
});

test.run();
