// Webhook deliveries for /metrics: the DeliveryObserver the delivery worker calls once per attempt
// (serve/alerts/alert-model.ts). Each process counts the attempts it made.
import { Counter, Histogram, type Registry } from 'prom-client';
import type { DeliveryAttempt, DeliveryObserver } from '../alerts/alert-model.ts';

const OUTCOMES: ReadonlyArray<DeliveryAttempt['outcome']> = ['delivered', 'retry', 'gave_up'];

export class DeliveryMetrics implements DeliveryObserver {
  private readonly attempts: Counter<'outcome'>;
  private readonly latency: Histogram;

  constructor(registry: Registry) {
    this.attempts = new Counter({
      name: 'ci_webhook_delivery_attempts_total',
      help: 'Webhook delivery attempts by outcome: delivered (2xx), retry (failed, tried again later), gave_up (failed for the last time)',
      labelNames: ['outcome'] as const,
      registers: [registry],
    });
    this.latency = new Histogram({
      name: 'ci_webhook_delivery_duration_seconds',
      help: 'Time of one delivery attempt, from the request to the receiver answering or the attempt failing',
      buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers: [registry],
    });
    // Every outcome is exported from the start, so rate() over a failure counter works before the first failure.
    for (const outcome of OUTCOMES) this.attempts.inc({ outcome }, 0);
  }

  attempt(outcome: DeliveryAttempt['outcome'], latencyMs: number): void {
    this.attempts.inc({ outcome });
    this.latency.observe(latencyMs / 1000);
  }
}
