// A small, coherent new story becomes a narrative of its own (docs/fields.md, "Narratives",
// admission): 30 posts over two days about a made-up kombucha recall (fixtures/planted-story.ts),
// planted into the committed sample, in a full run and arriving in an incremental one. It shares
// words with older stories ("recall", "mould"); it must not be folded into the nearest of them.
import path from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { plantedStory } from '../../fixtures/planted-story.ts';
import { AS_OF, readSnapshot, runPipeline, sampleDataDir, summaryOf, pipedSampleDir } from '../helpers/pipeline.ts';
import { cleanupTmp, writeLines } from '../helpers/tmp.ts';

test.after.each(cleanupTmp);

const LATER = new Date(AS_OF.getTime() + 3_600_000);

interface Found {
  label: string;
  /** Planted posts in the narrative holding most of them, of 30. */
  caught: number;
  /** Its members. */
  size: number;
}

/** Per window: the narrative holding most of the planted posts. */
async function found(d: string): Promise<Record<string, Found>> {
  const members = await readSnapshot(d, 'narrative-members', 'window_key, narrative_id, uuid');
  const labels = new Map((await readSnapshot(d, 'narratives', 'id, label')).map((r) => [r.id as string, r.label as string]));
  const out: Record<string, Found> = {};
  for (const w of ['7d', '30d', 'all']) {
    const by = new Map<string, { caught: number; size: number }>();
    for (const m of members) {
      if (m.window_key !== w) continue;
      const e = by.get(m.narrative_id as string) ?? { caught: 0, size: 0 };
      e.size++;
      if ((m.uuid as string).startsWith('planted-story-')) e.caught++;
      by.set(m.narrative_id as string, e);
    }
    const [id, best] = [...by].sort((a, b) => b[1].caught - a[1].caught)[0]!;
    out[w] = { label: labels.get(id)!, ...best };
  }
  return out;
}

function assertOwnNarrative(f: Record<string, Found>): void {
  for (const [w, x] of Object.entries(f)) {
    assert.ok(x.caught >= 24, `${w}: the planted story's narrative "${x.label}" holds ${x.caught} of its 30 posts`);
    assert.ok(x.caught >= 0.8 * x.size, `${w}: "${x.label}" is mostly other posts (${x.caught} planted of ${x.size})`);
    assert.match(x.label.toLowerCase(), /kombucha|brightbrew|mould/, `${w}: label "${x.label}"`);
  }
}

test('a small coherent story planted into the sample becomes a narrative of its own in a full run', async () => {
  const d = sampleDataDir();
  writeLines(path.join(d, 'landing', 'planted.ndjson'), plantedStory(AS_OF));
  await runPipeline(d, ['run'], AS_OF);
  assertOwnNarrative(await found(d));
});

test('the same story arriving in an incremental run becomes a narrative of its own, and the others keep their keys', async () => {
  const d = await pipedSampleDir();
  const before = new Map(
    (await readSnapshot(d, 'narratives', 'narrative_key, content_count')).map((r) => [r.narrative_key as string, Number(r.content_count)]),
  );
  writeLines(path.join(d, 'landing', 'planted.ndjson'), plantedStory(LATER));
  const run = await runPipeline(d, ['run'], LATER);
  assert.is(summaryOf(run, 'features').mode, 'incremental');
  assertOwnNarrative(await found(d));
  const after = new Set((await readSnapshot(d, 'narratives', 'narrative_key')).map((r) => r.narrative_key as string));
  const kept = [...before.keys()].filter((k) => after.has(k)).length;
  assert.ok(kept >= 0.9 * before.size, `${kept} of ${before.size} narrative keys kept`);
});

test.run();
