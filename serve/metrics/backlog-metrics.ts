// The alerts' backlog for /metrics, read at each scrape: the outbox's events still to be delivered
// by status, and the watches by state. Files: this process's memory; PostgreSQL: the tables every
// replica shares, so each replica reports the same figures (take max, not sum). A store that
// fails or stalls (the database down) leaves its gauge without samples for that scrape; the rest
// of /metrics is still answered.
import { Gauge, type Registry } from 'prom-client';
import { valueWithin } from '../../core/infra/wait-at-most.ts';
import { WAITING_STATUSES, type AlertOutbox } from '../alerts/alert-model.ts';
import type { WatchStore } from '../alerts/watch-store.ts';

/** Longest a scrape waits for a count: well inside Prometheus' default 10 s scrape timeout. */
const COUNT_WITHIN_MS = 2_000;

const counted = <T>(read: () => Promise<T>): Promise<T | null> => valueWithin(read(), COUNT_WITHIN_MS).catch(() => null);

export function watchAlertBacklog(registry: Registry, alerts: { outbox: AlertOutbox; watches: WatchStore }): void {
  new Gauge({
    name: 'ci_webhook_outbox_events',
    help:
      'Webhook events still to be delivered, by status: pending (due or retrying), paused (their watch paused). ' +
      'With PostgreSQL every replica reports the same shared figure',
    labelNames: ['status'] as const,
    registers: [registry],
    async collect() {
      const n = await counted(() => alerts.outbox.countWaiting());
      this.reset();
      if (n) for (const status of WAITING_STATUSES) this.set({ status }, n[status]);
    },
  });
  new Gauge({
    name: 'ci_alert_watches',
    help: 'Alert watches by state: active, or paused (their endpoint kept failing). With PostgreSQL every replica reports the same shared figure',
    labelNames: ['state'] as const,
    registers: [registry],
    async collect() {
      const n = await counted(() => alerts.watches.countByState());
      this.reset();
      if (n) for (const state of ['active', 'paused'] as const) this.set({ state }, n[state]);
    },
  });
}
