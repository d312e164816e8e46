// The alerts' backlog gauges (serve/metrics/backlog-metrics.ts) when their store fails: a count that
// rejects (the database down) or never answers (a stalled one) leaves its gauge without samples for
// that scrape, never a stale figure, and the rest of the scrape is still written.
import { Counter, Registry } from 'prom-client';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { AlertOutbox, WaitingCounts } from '../../serve/alerts/alert-model.ts';
import type { WatchStore } from '../../serve/alerts/watch-store.ts';
import { watchAlertBacklog } from '../../serve/metrics/backlog-metrics.ts';

/** The sample lines of one metric in a scrape (its HELP and TYPE lines left out). */
const samples = (text: string, name: string) => text.split('\n').filter((l) => l.startsWith(`${name}{`));

test('a failing or stalled store leaves its gauge empty for that scrape; the scrape still answers', async () => {
  let outboxCount: () => Promise<WaitingCounts> = async () => ({ pending: 4, paused: 2 });
  let watchCount: () => Promise<{ active: number; paused: number }> = async () => ({ active: 3, paused: 1 });
  const registry = new Registry();
  new Counter({ name: 'ci_other_total', help: 'another metric of the scrape', registers: [registry] }).inc(7);
  watchAlertBacklog(registry, {
    outbox: { countWaiting: () => outboxCount() } as Pick<AlertOutbox, 'countWaiting'> as AlertOutbox,
    watches: { countByState: () => watchCount() } as Pick<WatchStore, 'countByState'> as WatchStore,
  });

  const up = await registry.metrics();
  assert.equal(samples(up, 'ci_webhook_outbox_events'), [
    'ci_webhook_outbox_events{status="pending"} 4',
    'ci_webhook_outbox_events{status="paused"} 2',
  ]);
  assert.equal(samples(up, 'ci_alert_watches'), ['ci_alert_watches{state="active"} 3', 'ci_alert_watches{state="paused"} 1']);

  outboxCount = () => Promise.reject(new Error('connect ECONNREFUSED 127.0.0.1:5432'));
  watchCount = () => new Promise(() => undefined);
  const t0 = Date.now();
  const down = await registry.metrics();
  assert.ok(Date.now() - t0 < 5_000, 'a stalled count is waited for a bounded time');
  assert.equal(samples(down, 'ci_webhook_outbox_events'), []);
  assert.equal(samples(down, 'ci_alert_watches'), []);
  assert.match(down, /^# TYPE ci_webhook_outbox_events gauge$/m);
  assert.match(down, /^ci_other_total 7$/m);
});

test.run();
