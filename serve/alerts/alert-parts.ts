// serve/alerts/'s parts of the server, built from the configuration: the watches, their events'
// outbox (file or PostgreSQL), the evaluation after each publish, and the routes' settings.
import type { Config } from '../../core/infra/config.ts';
import type { DataDirLayout } from '../../core/infra/data-dir.ts';
import type { Logger } from '../../core/infra/log.ts';
import { waitAtMost } from '../../core/infra/wait-at-most.ts';
import type { AlertEvent, DeliveryObserver } from './alert-model.ts';
import { AlertEvaluator } from './alert-evaluator.ts';
import type { AlertRouteDeps } from './alert-routes.ts';
import { openWatchStore } from './open-watch-store.ts';
import { configuredSigningKey } from './watch-secret.ts';
import { openWebhookOutbox } from './webhook-outbox.ts';

export interface AlertParts extends AlertRouteDeps {
  evaluator: AlertEvaluator;
  /** Open the watches and the outbox (before the routes are built). */
  open(): Promise<void>;
  /** After the evaluation running (at most `drainMs`): the outbox, then the watches. */
  close(drainMs: number): Promise<void>;
  /** A start that failed part way: close what opened, ignoring what did not. */
  closeAfterFailedStart(): Promise<void>;
}

interface AlertPartsDeps {
  layout: DataDirLayout;
  /** {base_url} as events link to it (known once the server listens). */
  baseUrl: () => string;
  deliveries: DeliveryObserver;
  onEvaluated: (events: readonly AlertEvent[]) => void;
}

/** The parts, with the key watch secrets derive from loaded once (the routes and the deliveries share it). */
export async function alertParts(config: Config, log: Logger, deps: AlertPartsDeps): Promise<AlertParts> {
  const watches = openWatchStore(config, log);
  const signingKey = await configuredSigningKey(config);
  const outbox = openWebhookOutbox(config, log, watches, signingKey, deps.deliveries);
  const evaluator = new AlertEvaluator({ watches, outbox, layout: deps.layout, baseUrl: deps.baseUrl, log, onEvaluated: deps.onEvaluated });
  const parts: AlertParts = {
    watches,
    outbox,
    evaluator,
    perAccount: config.ALERTS_PER_ACCOUNT,
    allowPrivate: config.ALERTS_ALLOW_PRIVATE,
    signingKey,
    open: async () => {
      await watches.open();
      await outbox.open();
    },
    close: async (drainMs) => {
      await waitAtMost(evaluator.idle(), drainMs);
      await outbox.close();
      await watches.close();
    },
    closeAfterFailedStart: async () => {
      await outbox.close().catch(() => undefined);
      await watches.close().catch(() => undefined);
    },
  };
  return parts;
}
