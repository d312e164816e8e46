// The loader thread (serve/generation/loader-thread.ts) reads a new generation at the nice value it
// is given (LOADER_NICE), below the serving threads, and leaves the rest of the process at its own:
// the generation it loads is the one a load on this thread gives.
import os from 'node:os';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { dataDirLayout } from '../../core/infra/data-dir.ts';
import { generationDir, readCurrent } from '../../core/snapshots/generations.ts';
import { LoaderThread } from '../../serve/generation/loader-thread.ts';
import { loadGeneration } from '../../serve/generation/loaded-generation.ts';
import { pipedSampleDir } from '../helpers/pipeline.ts';
import { cleanupTmp } from '../helpers/tmp.ts';

test.after(() => cleanupTmp());

test('a load runs at the nice value asked for; this thread keeps its own', async () => {
  const dir = await pipedSampleDir();
  const layout = dataDirLayout(dir);
  const genDir = generationDir(layout, (await readCurrent(layout))!);
  const before = os.getPriority();
  const loader = new LoaderThread(Math.min(19, before + 7));
  try {
    const { gen, nice } = await loader.load(genDir, null);
    if (process.platform === 'linux') assert.is(nice, Math.min(19, before + 7));
    assert.is(os.getPriority(), before, "the main thread's priority is untouched");
    const here = await loadGeneration(genDir);
    assert.is(gen.id, here.id);
    assert.is(gen.posts, here.posts);
    assert.equal(
      gen.maps.narratives.map((n) => [n.narrative.id, n.reads?.split.creators.length, n.reads?.daily.length]),
      here.maps.narratives.map((n) => [n.narrative.id, n.reads?.split.creators.length, n.reads?.daily.length]),
      'member reads travel with the maps',
    );
  } finally {
    await loader.close();
  }
});

test.run();
