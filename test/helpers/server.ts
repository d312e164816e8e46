// A real server on 127.0.0.1 and a free port over a test data directory, quiet, with a rate limit
// no test reaches unless it means to; `env` adds or overrides configuration.
import { loadConfig } from '../../core/infra/config.ts';
import { createLogger } from '../../core/infra/log.ts';
import { startServer, type RunningServer } from '../../serve/server.ts';

export function testServer(dataDir: string, env: Record<string, string> = {}): Promise<RunningServer> {
  return startServer(
    loadConfig({
      DATA_DIR: dataDir,
      PORT: '0',
      HOST: '127.0.0.1',
      LOG_LEVEL: 'silent',
      RATE_LIMIT_RPS: '1000',
      RATE_LIMIT_BURST: '1000',
      ...env,
    }),
    createLogger('test', 'silent'),
  );
}
