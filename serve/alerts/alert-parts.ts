// serve/alerts/'s parts of the server, built from the configuration: the watches, their events'
// outbox (file or PostgreSQL), the evaluation after each publish, and the routes' settings.
import type { Config } from '../../core/infra/config.ts';
import type { DataDirLayout } from '../../core/infra/data-dir.ts';
import type { Logger } from '../../core/infra/log.ts';
import { waitAtMost } from '../../core/infra/wait-at-most.ts';
import type { AlertEvent, DeliveryObserver } from './alert-model.ts';
import { AlertEvaluator } from './alert-evaluator.ts';
import type { AlertRouteDeps } from './alert-routes.ts';
import { alertOutbox } from './outbox-storage.ts';
import { signingKey } from './watch-secret.ts';
import { watchStorage } from './watch-storage.ts';

export interface AlertParts extends AlertRouteDeps {
  evaluator: AlertEvaluator;
  /** Open the watches and the outbox, then load the key watch secrets derive from (before the routes are built). */
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

export function alertParts(config: Config, log: Logger, deps: AlertPartsDeps): AlertParts {
  const watches = watchStorage(config, log);
  const outbox = alertOutbox(config, log, watches, deps.deliveries);
  const evaluator = new AlertEvaluator({ watches, outbox, layout: deps.layout, baseUrl: deps.baseUrl, log, onEvaluated: deps.onEvaluated });
  const parts: AlertParts = {
    watches,
    outbox,
    evaluator,
    perAccount: config.ALERTS_PER_ACCOUNT,
    allowPrivate: config.ALERTS_ALLOW_PRIVATE === '1',
    // Loaded by open(), before the routes that read it are built.
    signingKey: Buffer.alloc(0),
    open: async () => {
      await watches.open();
      await outbox.open();
      parts.signingKey = await signingKey(deps.layout.alerts, config.ALERTS_SIGNING_KEY);
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
