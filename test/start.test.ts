// `npm start` on an empty data directory: generates the corpus, runs the pipeline, publishes,
// then keeps running its schedule until SIGTERM. A second start serves what is there.
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { dataDirLayout } from '../core/data-dir.ts';
import { readCurrent, readManifest } from '../core/generations.ts';
import { spawnTs, waitFor } from './helpers/child.ts';
import { cleanupTmp, tmpDir } from './helpers/tmp.ts';

test.after.each(cleanupTmp);

async function start(d: string) {
  const child = spawnTs('pipeline/start.ts', [], { DATA_DIR: d, DEFAULT_CORPUS_POSTS: '400', PIPELINE_SCHEDULE: '{"run":"0 0 1 1 *"}' });
  await waitFor(() => /current generation ready/.test(child.out()) || child.proc.exitCode !== null, 'start to publish', 180_000);
  return child;
}

test('first start generates the corpus, publishes generation 1 and keeps running; SIGTERM stops it', async () => {
  const d = tmpDir();
  const layout = dataDirLayout(d);
  const child = await start(d);
  assert.is(child.proc.exitCode, null, child.out());
  assert.is(await readCurrent(layout), 'g000001');
  const m = await readManifest(layout, 'g000001');
  assert.ok(m.counts.posts! > 300, `posts published: ${m.counts.posts}`);
  // The ground truth lives outside landing/, so ingest can never take it for posts.
  assert.ok(fs.readdirSync(layout.truth).some((f) => f.endsWith('.truth.ndjson')));
  assert.not.ok(fs.readdirSync(layout.landing, { recursive: true }).some((f) => String(f).includes('truth')));
  assert.ok(fs.readdirSync(layout.quarantine).length > 0, 'planted bad records quarantined');
  child.proc.kill('SIGTERM');
  assert.is((await child.exited).code, 143);

  // Second start: nothing regenerated or republished.
  const again = await start(d);
  assert.is(await readCurrent(layout), 'g000001');
  assert.is(fs.readdirSync(path.join(layout.landing)).length, 1);
  again.proc.kill('SIGTERM');
  assert.is((await again.exited).code, 143);
});

test.run();
