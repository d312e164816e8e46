// What a first start does before anything serves: on an empty DATA_DIR, generate the default
// fixture corpus into landing/ and run every stage to publish generation 1; a generation of an
// older snapshot layout is rebuilt. Shared by `npm start` (start.ts) and `npm run cluster` (cluster.ts).
import fs from 'node:fs/promises';
import path from 'node:path';
import type { Config } from '../core/infra/config.ts';
import { dataDirLayout } from '../core/infra/data-dir.ts';
import { readCurrent, readManifest, SNAPSHOT_SCHEMA_VERSION } from '../core/snapshots/generations.ts';
import type { Logger } from '../core/infra/log.ts';
import { generateCorpus } from '../fixtures/generate.ts';
import { resolveStages, runStages } from '../pipeline/run/runner.ts';

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
const START_CORPUS_VIDEO_FRAMES = 2;

/** Generate the default corpus into landing/ (its ground truth beside, outside landing/). */
async function ensureCorpus(config: Config, log: Logger): Promise<void> {
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

/** A servable generation in DATA_DIR, made if there is none (or rebuilt from an older layout). */
export async function ensureGeneration(config: Config, log: Logger): Promise<void> {
  const layout = dataDirLayout(config.dataDir);
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
}
