// Alert evaluations for /metrics: the evaluator reports each evaluation it finished (one per
// generation served with watches to evaluate) and the events it made, by the condition each fired
// on. Each process counts its own (every replica evaluates; the outbox keeps one event per id).
import { Counter, type Registry } from 'prom-client';
import { ALERT_CONDITIONS, type AlertEvent } from '../alerts/alert-model.ts';

export class AlertMetrics {
  private readonly evaluations: Counter;
  private readonly events: Counter<'condition'>;

  constructor(registry: Registry) {
    this.evaluations = new Counter({
      name: 'ci_alert_evaluations_total',
      help: 'Alert evaluations finished: a generation served, compared with the one before it for every watch',
      registers: [registry],
    });
    this.events = new Counter({
      name: 'ci_alert_events_total',
      help: 'Alert events made by the evaluations, by the condition each fired on (an event kept already is counted again)',
      labelNames: ['condition'] as const,
      registers: [registry],
    });
    for (const condition of ALERT_CONDITIONS) this.events.inc({ condition }, 0);
  }

  /** One evaluation finished with these events. */
  readonly evaluated = (events: readonly AlertEvent[]): void => {
    this.evaluations.inc();
    for (const e of events) this.events.inc({ condition: e.type.slice('narrative.'.length) });
  };
}
