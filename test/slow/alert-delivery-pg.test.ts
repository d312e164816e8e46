// Webhook delivery on PostgreSQL (a real embedded server): two outboxes adding the same events
// keep one copy, queued once; two processes working one queue ('webhook-deliveries') deliver
// each event once; and when the process delivering an event is killed with SIGKILL, the other
// delivers it once its run expires.
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { loadConfig } from '../../core/infra/config.ts';
import { createLogger } from '../../core/infra/log.ts';
import { pollUntil } from '../../core/infra/wait-at-most.ts';
import type { AlertEvent, Watch } from '../../serve/alerts/alert-model.ts';
import { openWebhookOutbox } from '../../serve/alerts/webhook-outbox.ts';
import { PgOutboxStore } from '../../serve/alerts/pg-outbox-store.ts';
import { PgTaskQueue } from '../../serve/queue/pg-task-queue.ts';
import { signingKey, watchSecret, configuredSigningKey } from '../../serve/alerts/watch-secret.ts';
import { openWatchStore } from '../../serve/alerts/open-watch-store.ts';
import type { WebhookOutbox } from '../../serve/alerts/webhook-outbox.ts';
import { eventFor, startReceiver, verifyWebhook, watchFor, type Receiver } from '../helpers/alerts.ts';
import { spawnTs, type Child } from '../helpers/child.ts';
import { database, stopPostgres } from '../helpers/postgres.ts';
import { cleanupTmp, tmpDir } from '../helpers/tmp.ts';

const log = createLogger('test', 'silent');
const SIGNING_KEY = 'a test signing key shared by the replicas';

test.after(async () => {
  await stopPostgres();
  cleanupTmp();
});

const envOf = (url: string, extra: Record<string, string> = {}) => ({
  DATA_DIR: tmpDir(),
  DATABASE_URL: url,
  ALERTS_ALLOW_PRIVATE: '1',
  ALERTS_SIGNING_KEY: SIGNING_KEY,
  ALERTS_RETRY_BASE_MS: '50',
  ...extra,
});

async function addWatch(url: string, receiverUrl: string): Promise<Watch> {
  const watches = openWatchStore(loadConfig(envOf(url)), log);
  await watches.open();
  const w = watchFor(receiverUrl);
  assert.ok(await watches.add(w, 100));
  await watches.close();
  return w;
}

function eventsFile(events: AlertEvent[]): string {
  const f = path.join(tmpDir(), 'events.json');
  fs.writeFileSync(f, JSON.stringify(events));
  return f;
}

async function stop(c: Child): Promise<void> {
  if (c.proc.exitCode === null && c.proc.signalCode === null) c.proc.kill('SIGTERM');
  await c.exited;
}

/** A replica's delivery: ready once it printed so. */
async function replica(env: Record<string, string>): Promise<Child> {
  const c = spawnTs('test/helpers/delivery-child.ts', [], env);
  await pollUntil('a replica to start', () => c.out().includes('delivery ready') || c.proc.exitCode !== null, 60_000);
  if (!c.out().includes('delivery ready')) throw new Error(`replica did not start:\n${c.out()}`);
  return c;
}

test('two outboxes adding the same events (two replicas evaluating one generation) keep one copy, delivered once', async () => {
  const url = await database();
  const rec = await startReceiver();
  const w = await addWatch(url, rec.url);
  const opened: Array<{ close(): Promise<void> }> = [];
  try {
    const outboxes: WebhookOutbox[] = [];
    for (let i = 0; i < 2; i++) {
      const config = loadConfig(envOf(url));
      const watches = openWatchStore(config, log);
      await watches.open();
      const outbox = openWebhookOutbox(config, log, watches, await configuredSigningKey(config));
      await outbox.open();
      opened.push(watches, outbox);
      outboxes.push(outbox);
    }
    const events = Array.from({ length: 10 }, (_, i) => eventFor(w, i));
    const [a, b] = await Promise.all([outboxes[0]!.add(events), outboxes[1]!.add(events)]);
    assert.is(a.length + b.length, 10, 'each event added by one of them');
    await pollUntil(
      'every event delivered',
      async () => (await outboxes[0]!.events(w.id, 100)).filter((e) => e.status === 'delivered').length === 10,
      30_000,
    );
    assert.is(rec.received.length, 10);
    assert.is(new Set(rec.received.map((g) => g.headers['x-alert-event-id'])).size, 10);
    const secret = watchSecret(await signingKey(tmpDir(), SIGNING_KEY), w.id, 1);
    assert.ok(rec.received.every((g) => verifyWebhook(secret, g.body, String(g.headers['x-alert-signature']))));
    // The attempts are shared: either replica shows all of them.
    assert.is((await outboxes[1]!.attempts(w.id, 100)).length, 10);
  } finally {
    for (const c of opened.reverse()) await c.close();
    await rec.close();
  }
});

test('the PostgreSQL outbox keeps each watch its newest 100 events (pending ones always) and 200 attempts', async () => {
  const url = await database();
  const book = new PgOutboxStore(url);
  // A real pg-boss queue whose runs do nothing: the test plays the deliveries on the book.
  const queue = new PgTaskQueue({
    databaseUrl: url,
    queue: 'webhook-deliveries',
    concurrency: 1,
    attempts: 1,
    expireSeconds: 10,
    onError: () => undefined,
  });
  await book.open();
  await queue.start(async () => undefined);
  try {
    const w = watchFor('http://127.0.0.1:9/hook');
    const events = Array.from({ length: 210 }, (_, i) => eventFor(w, i));
    assert.is((await book.add(events, new Date(), queue)).length, 210);
    assert.is((await book.add(events, new Date(), queue)).length, 0, 'kept once');
    assert.is((await book.events(w.id, 500)).length, 210, 'pending events are never trimmed');
    for (const e of events) {
      const claim = await book.lease(e.id, 1, new Date(), 5000);
      assert.ok('entry' in claim);
      const at = new Date().toISOString();
      const attempt = {
        event_id: e.id,
        watch_id: w.id,
        attempt: 1,
        at,
        status: 200,
        error: null,
        latency_ms: 1,
        outcome: 'delivered' as const,
      };
      await book.record(e.id, 1, { attempt, status: 'delivered', next_attempt_at: null }, queue);
    }
    assert.equal(await book.lease(events[0]!.id, 1, new Date(), 5000), { skip: true }, 'a delivered event is not claimed again');
    const one = eventFor(w, 999);
    await book.add([one], new Date(), queue);
    const kept = await book.events(w.id, 500);
    assert.is(kept.length, 100);
    assert.equal(kept[0]!.event.id, one.id);
    assert.equal(kept[1]!.event.id, events[209]!.id);
    assert.is((await book.attempts(w.id, 500)).length, 200);
    assert.ok((await book.lastDeliveredAt(w.id))! <= new Date());
  } finally {
    await queue.close();
    await book.close();
  }
});

test('two processes working one queue: each event delivered once', async () => {
  const url = await database();
  const rec = await startReceiver();
  const w = await addWatch(url, rec.url);
  const events = Array.from({ length: 40 }, (_, i) => eventFor(w, i));
  const a = await replica(envOf(url, { LOG_LEVEL: 'debug' }));
  const b = await replica(envOf(url, { LOG_LEVEL: 'debug', EVENTS_FILE: eventsFile(events) }));
  try {
    await pollUntil('every event received', () => new Set(rec.received.map((g) => g.headers['x-alert-event-id'])).size === 40, 60_000);
    // Settled runs leave nothing to repeat: a moment of polling more finds no second request.
    await pollUntil('both replicas to have polled again', () => Date.now() - Math.max(...rec.received.map((g) => g.at)) > 1500, 5_000);
    assert.is(rec.received.length, 40);
    const attemptsOf = (c: Child) => (c.out().match(/"msg":"webhook attempt"/g) ?? []).length;
    assert.is(attemptsOf(a) + attemptsOf(b), 40);
  } finally {
    await stop(a);
    await stop(b);
    await rec.close();
  }
});

test('the process delivering an event killed with SIGKILL: the other replica delivers it', async () => {
  const url = await database();
  let hang = true;
  const rec: Receiver = await startReceiver(() => (hang ? 'hang' : 200));
  const w = await addWatch(url, rec.url);
  const event = eventFor(w, 1);
  // A 2 s attempt timeout: a run expires (and its event goes to another replica) 7 s after it began.
  const extra = { LOG_LEVEL: 'debug', ALERTS_TIMEOUT_MS: '2000' };
  const a = await replica(envOf(url, extra));
  const b = await replica(envOf(url, { ...extra, EVENTS_FILE: eventsFile([event]) }));
  try {
    await pollUntil('the first attempt to reach the receiver', () => rec.of(event.id).length === 1, 60_000);
    const delivering = [a, b].find((c) => c.out().includes('"msg":"webhook attempt"'));
    assert.ok(delivering, 'one replica made the attempt');
    const other = delivering === a ? b : a;
    delivering.proc.kill('SIGKILL');
    assert.is((await delivering.exited).signal, 'SIGKILL');
    hang = false;
    const killedAt = Date.now();
    await pollUntil('the other replica to deliver the event', () => rec.of(event.id).length === 2, 60_000);
    assert.ok(other.out().includes(`"event":"${event.id}"`), 'the surviving replica made the second attempt');
    // Taken over once the lease (6 s from the claim) and the run (7 s) expired, not before, and not much later.
    const tookMs = rec.of(event.id)[1]!.at - killedAt;
    assert.ok(tookMs >= 4_000 && tookMs < 20_000, `taken over after ${tookMs} ms`);
    console.log(`SIGKILL mid-delivery: the other replica delivered the event ${tookMs} ms after the kill`);
    // Read from the book itself: an outbox here would start a delivery queue of its own in this process.
    const book = new PgOutboxStore(url);
    try {
      await book.open();
      await pollUntil('the event recorded as delivered', async () => (await book.events(w.id, 10))[0]?.status === 'delivered', 10_000);
      const [state] = await book.events(w.id, 10);
      assert.is(state!.attempts, 1, 'the killed attempt never finished, so it is not counted');
    } finally {
      await book.close();
    }
  } finally {
    await stop(a);
    await stop(b);
    await rec.close();
  }
});

test.run();
