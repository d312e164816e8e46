// `npm run serve`: serve the current generation (the pipeline must have published one).
import { ConfigError, loadConfig } from '../core/infra/config.ts';
import { createLogger } from '../core/infra/log.ts';
import { isConnectionLoss } from '../core/infra/postgres/connection-loss.ts';
import { shownPath, startNotice, startServer } from './server.ts';

let config;
try {
  config = loadConfig();
} catch (err) {
  process.stderr.write(`serve: ${(err as ConfigError).message}\n`);
  process.exit(2);
}
const log = createLogger('serve', config.LOG_LEVEL);
// The last guard of "no replica exits on a database outage" (docs/scaling.md): every call path of
// ours handles a lost connection, but a library may start a database call without waiting for it.
// Such a rejection is logged and the replica serves on; any other unhandled rejection still ends
// the process, as Node.js would (a bug: the supervisor starts it again).
process.on('unhandledRejection', (reason) => {
  if (isConnectionLoss(reason)) {
    log.warn({ err: (reason as Error).message }, 'unhandled rejection: a database call met the outage; serving on');
    return;
  }
  log.fatal({ err: (reason as Error)?.stack ?? String(reason) }, 'unhandled rejection');
  process.exit(1);
});
try {
  const s = await startServer(config, log);
  log.info({ baseUrl: s.baseUrl, generation: s.snapshots.generation?.id }, 'serving');
  process.stdout.write(startNotice(s, shownPath(config.dataDir)));
  const stop = async (signal: string) => {
    log.info({ signal }, 'shutting down: finishing in-flight requests');
    await s.close();
    log.info({}, 'stopped');
    process.exit(0);
  };
  process.once('SIGTERM', () => void stop('SIGTERM'));
  process.once('SIGINT', () => void stop('SIGINT'));
} catch (err) {
  process.stderr.write(`serve: ${(err as Error).message.split('\n')[0]}\n`);
  process.exit(1);
}
