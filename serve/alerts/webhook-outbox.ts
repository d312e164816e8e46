// The outbox the rest of the server sees (AlertOutbox): events kept in an OutboxStore (files or
// PostgreSQL; open-outbox-store.ts) and delivered through a task queue of their own (serve/queue/: memory, or pg-boss's
// 'webhook-deliveries'), ALERTS_CONCURRENCY at a time per process. A run takes one queue entry:
// it leases the event (one run at a time, however many entries name it), signs and POSTs it, and
// records the attempt with the event's next state: delivered, a retry (queued with the record),
// or given up. A watch whose endpoint took nothing during a whole retry span (ALERTS_RETRY_WINDOW_MS) is paused: its
// events wait (status paused) until POST /alerts/{id}/resume queues them again.
import type { Config } from '../../core/infra/config.ts';
import type { Logger } from '../../core/infra/log.ts';
import type { TaskQueue } from '../queue/task-queue.ts';
import type { AlertEvent, AlertOutbox, DeliveryAttempt, DeliveryObserver, EventState, WaitingCounts, Watch } from './alert-model.ts';
import type { WatchStore } from './watch-store.ts';
import { openOutboxStore } from './open-outbox-store.ts';
import { parseQueueEntry, type AttemptResult, type OutboxEntry, type OutboxStore } from './outbox-store.ts';
import { nextAttemptAt, type RetrySettings } from './retry-schedule.ts';
import { signatureHeader, watchSecret } from './watch-secret.ts';
import { isDelivered, postWebhook } from './webhook-sender.ts';

const USER_AGENT = 'content-intelligence-webhooks/1';

interface WebhookOutboxOptions {
  store: OutboxStore;
  queue: TaskQueue;
  watches: WatchStore;
  /** The key watch secrets derive from (watch-secret.ts signingKey: loaded once by the server). */
  signingKey: Buffer;
  timeoutMs: number;
  retry: RetrySettings;
  allowPrivate: boolean;
  /** How long a run holds its event (a dead replica's event is free again after it). */
  leaseMs: number;
  log: Logger;
  observer?: DeliveryObserver;
}

/** The server's outbox: its store and queue as the configuration picks (open-outbox-store.ts). */
export function openWebhookOutbox(
  config: Config,
  log: Logger,
  watches: WatchStore,
  signingKey: Buffer,
  observer?: DeliveryObserver,
): WebhookOutbox {
  return new WebhookOutbox({
    ...openOutboxStore(config, log),
    watches,
    signingKey,
    timeoutMs: config.ALERTS_TIMEOUT_MS,
    retry: { baseMs: config.ALERTS_RETRY_BASE_MS, spanMs: config.ALERTS_RETRY_WINDOW_MS },
    allowPrivate: config.ALERTS_ALLOW_PRIVATE,
    log,
    observer,
  });
}

export class WebhookOutbox implements AlertOutbox {
  constructor(private readonly o: WebhookOutboxOptions) {}

  async open(): Promise<void> {
    const again = await this.o.store.open();
    await this.o.queue.start((entry) => this.run(entry));
    // One process: the events pending when it stopped (or was killed) are queued again.
    for (const { entry, at } of again) await this.o.queue.enqueue(entry, at);
  }

  add(events: AlertEvent[]): Promise<AlertEvent[]> {
    return this.o.store.add(events, new Date(), this.o.queue);
  }

  events(watchId: string, limit: number): Promise<EventState[]> {
    return this.o.store.events(watchId, limit);
  }

  attempts(watchId: string, limit: number): Promise<DeliveryAttempt[]> {
    return this.o.store.attempts(watchId, limit);
  }

  async redeliver(watchId: string, eventId: string): Promise<EventState | null> {
    return (await this.o.store.requeue(watchId, eventId, new Date(), this.o.queue))[0] ?? null;
  }

  async resume(watchId: string): Promise<number> {
    return (await this.o.store.requeue(watchId, null, new Date(), this.o.queue)).length;
  }

  forget(watchId: string): Promise<void> {
    return this.o.store.forget(watchId);
  }

  countWaiting(): Promise<WaitingCounts> {
    return this.o.store.countWaiting();
  }

  /** Runs in flight finish (each bounded by ALERTS_TIMEOUT_MS); queued ones stay in the store. */
  async close(): Promise<void> {
    await this.o.queue.close();
    await this.o.store.close();
  }

  /** One queue entry; a failure of the store (a database gone for a moment) tries the entry again once its lease ends. */
  private async run(queued: string): Promise<void> {
    try {
      await this.runOnce(queued);
    } catch (err) {
      this.o.log.error({ entry: queued, err: (err as Error).message }, 'webhook delivery bookkeeping failed; tried again later');
      await this.o.queue.enqueue(queued, new Date(Date.now() + this.o.leaseMs)).catch(() => undefined);
    }
  }

  /** At most one attempt of the entry's event. */
  private async runOnce(queued: string): Promise<void> {
    const q = parseQueueEntry(queued);
    if (!q) return;
    const lease = await this.o.store.lease(q.eventId, q.turn, new Date(), this.o.leaseMs);
    if ('skip' in lease) return;
    // Another run holds it: look again when its lease ends (it may have died).
    if ('busyUntil' in lease) return this.o.queue.enqueue(queued, lease.busyUntil);
    const e = lease.entry;
    const watch = await this.o.watches.get(e.event.watch_id);
    if (!watch) return this.o.store.forget(e.event.watch_id);
    if (watch.paused) return this.o.store.park(q.eventId, q.turn);
    const result = await this.attempt(watch, e);
    await this.o.store.record(q.eventId, q.turn, result, this.o.queue);
    const a = result.attempt;
    this.o.observer?.attempt(a.outcome, a.latency_ms);
    const line = {
      event: a.event_id,
      watch: a.watch_id,
      attempt: a.attempt,
      status: a.status,
      latencyMs: a.latency_ms,
      outcome: a.outcome,
    };
    if (a.outcome === 'delivered') this.o.log.debug(line, 'webhook delivered');
    else this.o.log.warn({ ...line, error: a.error, next: result.next_attempt_at }, 'webhook delivery failed');
  }

  private async attempt(watch: Watch, e: OutboxEntry): Promise<AttemptResult> {
    const at = new Date();
    const body = JSON.stringify(e.event);
    const t = Math.floor(at.getTime() / 1000);
    const secret = watchSecret(this.o.signingKey, watch.id, watch.secret_version);
    this.o.log.debug({ event: e.event.id, watch: watch.id, attempt: e.attempts + 1 }, 'webhook attempt');
    const sent = await postWebhook(
      watch.url,
      body,
      {
        'Content-Type': 'application/json',
        'User-Agent': USER_AGENT,
        'X-Alert-Event-Id': e.event.id,
        'X-Alert-Event-Type': e.event.type,
        'X-Alert-Timestamp': String(t),
        'X-Alert-Signature': signatureHeader(secret, body, t),
      },
      { timeoutMs: this.o.timeoutMs, allowPrivate: this.o.allowPrivate },
    );
    const attempt: DeliveryAttempt = {
      event_id: e.event.id,
      watch_id: watch.id,
      attempt: e.attempts + 1,
      at: at.toISOString(),
      status: sent.status,
      error: sent.error,
      latency_ms: sent.latencyMs,
      outcome: 'delivered',
    };
    if (isDelivered(sent.status)) return { attempt, status: 'delivered', next_attempt_at: null };
    const spanStart = new Date(e.window_start);
    const next = nextAttemptAt(new Date(), spanStart, e.window_attempts + 1, this.o.retry);
    if (next) return { attempt: { ...attempt, outcome: 'retry' }, status: 'pending', next_attempt_at: next };
    return {
      attempt: { ...attempt, outcome: 'gave_up' },
      status: await this.pauseOrFail(watch, spanStart, sent.error),
      next_attempt_at: null,
    };
  }

  /**
   * An event used up its retry span. When the endpoint took nothing else meanwhile, it is the
   * endpoint that fails: the watch is paused and the event waits with the others. When it took
   * other events, only this one failed (the receiver rejects it): it is marked failed, and can be
   * redelivered.
   */
  private async pauseOrFail(watch: Watch, spanStart: Date, error: string | null): Promise<'paused' | 'failed'> {
    const last = await this.o.store.lastDeliveredAt(watch.id);
    if (last && last >= spanStart) return 'failed';
    await this.o.watches.setPaused(watch.id, {
      at: new Date().toISOString(),
      reason:
        `every delivery failed for ${duration(this.o.retry.spanMs)} (last: ${error ?? 'no answer'}); ` +
        `POST /alerts/${watch.id}/resume once the endpoint is fixed`,
    });
    this.o.log.warn({ watch: watch.id, error }, 'webhook endpoint kept failing: watch paused');
    return 'paused';
  }
}

/** 24 h, 30 min, 2 s: the retry span as the pause reason names it. */
function duration(ms: number): string {
  if (ms >= 3_600_000) return `${Math.round((ms / 3_600_000) * 10) / 10} h`;
  if (ms >= 60_000) return `${Math.round(ms / 60_000)} min`;
  return `${Math.round(ms / 1000)} s`;
}
