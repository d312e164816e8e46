// `npm start`, the application's entry: the one place that runs the pipeline and the server in
// one process (so it sits above both layers). The first-run experience: On an empty DATA_DIR it generates the default fixture
// corpus into landing/, runs every stage and publishes generation 1; on later starts it serves
// what is there. Then it serves the HTTP API (serve/server.ts; the demo key is printed on the
// first start) and keeps the data fresh on the PIPELINE_SCHEDULE: the server swaps to each new
// generation by itself.
import { ConfigError, loadConfig, type Config } from '../core/infra/config.ts';
import { dataDirLayout } from '../core/infra/data-dir.ts';
import { readCurrent } from '../core/snapshots/generations.ts';
import { createLogger } from '../core/infra/log.ts';
import { checkKind } from '../ledger/backend-record.ts';
import { startSchedule } from '../pipeline/run/schedule.ts';
import { ensureGeneration } from './first-run.ts';
import { shownPath, startNotice, startServer, type RunningServer } from '../serve/server.ts';

async function main(): Promise<void> {
  let config: Config;
  try {
    config = loadConfig();
  } catch (err) {
    process.stderr.write(`start: ${(err as ConfigError).message}\n`);
    process.exit(2);
  }
  const log = createLogger('start', config.LOG_LEVEL);
  const layout = dataDirLayout(config.dataDir);
  try {
    // The data directory's ledger first: a start against the other one is refused before any slow work.
    await checkKind(config.dataDir, layout.ledger, { kind: config.DATABASE_URL ? 'postgres' : 'file', databaseUrl: config.DATABASE_URL });
    await ensureGeneration(config, log);
  } catch (err) {
    process.stderr.write(`start: ${(err as Error).message.split('\n')[0]}\n`);
    process.exit(1);
  }
  let server: RunningServer;
  try {
    server = await startServer(config, createLogger('serve', config.LOG_LEVEL));
  } catch (err) {
    process.stderr.write(`start: ${(err as Error).message.split('\n')[0]}\n`);
    process.exit(1);
  }
  const schedule = startSchedule(config, log);
  const stop = async () => {
    await schedule.stop();
    await server.close();
    process.exit(0);
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
  // Logged last: once this line is out, the process is fully up (signals included).
  log.info({ generation: await readCurrent(layout), dataDir: layout.root, baseUrl: server.baseUrl }, 'current generation ready; serving');
  process.stdout.write(startNotice(server, shownPath(layout.root)));
}

await main();
