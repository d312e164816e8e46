// A process that delivers webhooks as a server does (the watch store and the outbox of its
// configuration: files of DATA_DIR, or PostgreSQL with DATABASE_URL), for the crash and replica
// tests: it adds the events of EVENTS_FILE (if set), prints "delivery ready", and delivers until
// SIGTERM. LOG_LEVEL=debug shows each attempt it makes ("webhook attempt").
import fs from 'node:fs';
import { loadConfig } from '../../core/infra/config.ts';
import { createLogger } from '../../core/infra/log.ts';
import type { AlertEvent } from '../../serve/alerts/alert-model.ts';
import { configuredSigningKey } from '../../serve/alerts/watch-secret.ts';
import { openWebhookOutbox } from '../../serve/alerts/webhook-outbox.ts';
import { openWatchStore } from '../../serve/alerts/open-watch-store.ts';

const config = loadConfig();
const log = createLogger('delivery-child', config.LOG_LEVEL);
const watches = openWatchStore(config, log);
await watches.open();
const outbox = openWebhookOutbox(config, log, watches, await configuredSigningKey(config));
await outbox.open();
if (process.env.EVENTS_FILE) {
  const events = JSON.parse(fs.readFileSync(process.env.EVENTS_FILE, 'utf8')) as AlertEvent[];
  const added = await outbox.add(events);
  log.info({ added: added.length }, 'events added');
}
log.info('delivery ready');
process.once('SIGTERM', () => {
  void outbox
    .close()
    .then(() => watches.close())
    .then(() => process.exit(0));
});
