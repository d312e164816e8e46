// `npm start`, the application's entry: the one place that runs the pipeline and the server in
// one process (so it sits above both layers). The first-run experience: On an empty DATA_DIR it generates the default fixture
// corpus into landing/, runs every stage and publishes generation 1; on later starts it serves
// what is there. Then it serves the HTTP API (serve/server.ts; the demo key is printed on the
// first start) and keeps the data fresh on the PIPELINE_SCHEDULE: the server swaps to each new
// generation by itself.
import fs from 'node:fs/promises';
import path from 'node:path';
import { ConfigError, loadConfig, type Config } from '../core/config.ts';
import { dataDirLayout } from '../core/data-dir.ts';
import { readCurrent, readManifest, SNAPSHOT_SCHEMA_VERSION } from '../core/generations.ts';
import { createLogger, type Logger } from '../core/log.ts';
import { generateCorpus } from '../fixtures/generate.ts';
import { resolveStages, runStages } from '../pipeline/runner.ts';
import { startSchedule } from '../pipeline/schedule.ts';
import { shownPath, startNotice, startServer, type RunningServer } from '../serve/server.ts';

async function hasLandingData(landing: string): Promise<boolean> {
  try {
    const entries = await fs.readdir(landing, { recursive: true });
    return entries.some((e) => /\.(ndjson|jsonl|csv|parquet)(\.gz)?$/i.test(String(e)));
  } catch {
    return false;
  }
}

/**
 * Frames per video of the corpus `npm start` generates: 2 instead of the generator's 4. Video
 * frames were four fifths of its 37,000 media files, and writing, then reading and decoding them,
 * a third of the first start's time; two frames still show motion. The quality benches keep 4.
 */
export const START_CORPUS_VIDEO_FRAMES = 2;

/** Generate the default corpus into landing/ (its ground truth beside, outside landing/). */
export async function ensureCorpus(config: Config, log: Logger): Promise<void> {
  const layout = dataDirLayout(config.dataDir);
  if (await hasLandingData(layout.landing)) return;
  const seed = config.DEFAULT_CORPUS_SEED;
  const outDir = path.join(layout.landing, `fixture-seed${seed}`);
  await fs.mkdir(layout.truth, { recursive: true });
  log.info({ posts: config.DEFAULT_CORPUS_POSTS, seed, outDir }, 'empty data directory: generating the default fixture corpus');
  const summary = await generateCorpus({
    posts: config.DEFAULT_CORPUS_POSTS,
    outDir,
    seed,
    truthFile: path.join(layout.truth, `fixture-seed${seed}.truth.ndjson`),
    videoFrames: START_CORPUS_VIDEO_FRAMES,
  });
  log.info({ records: summary.records, mediaFiles: summary.mediaFiles, ms: Math.round(summary.ms) }, 'fixture corpus generated');
}

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
    const current = await readCurrent(layout);
    if (!current) {
      await ensureCorpus(config, log);
      const run = await runStages(resolveStages(['run']), { config, log });
      log.info({ ms: run.ms }, 'first pipeline run published');
    } else if ((await readManifest(layout, current)).schema_version !== SNAPSHOT_SCHEMA_VERSION) {
      // A generation of an older snapshot layout (before time segments) cannot be served: rebuild it.
      log.info({ generation: current }, 'the served generation has an older snapshot layout: a full run rebuilds it');
      const run = await runStages(resolveStages(['run']), { config, log, full: true });
      log.info({ ms: run.ms }, 'pipeline run published');
    }
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
