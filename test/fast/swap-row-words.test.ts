// A swap keeps the rows' words an answer thread knows (serve/search/answer-narratives.ts,
// inheritRowWords) for the rows that are the same posts at the same rows in the new generation,
// and the answers built on those kept words are the answers built cold.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { dataDirLayout } from '../../core/infra/data-dir.ts';
import { analyseSearch } from '../../core/ranking/search.ts';
import { generationDir, readCurrent } from '../../core/snapshots/generations.ts';
import type { LoadedGeneration } from '../../serve/generation/loaded-generation.ts';
import { inheritRowWords } from '../../serve/search/answer-narratives.ts';
import { InThreadEngine } from '../../serve/search/in-thread-engine.ts';
import { pipedSampleDir, runPipeline } from '../helpers/pipeline.ts';
import { cleanupTmp } from '../helpers/tmp.ts';

test.after(() => cleanupTmp());

const QUERIES = ['coffee', 'sourdough bread', 'EV battery recall', '#fyp', 'the new phone camera review'];
const WINDOWS = ['7d', 'all'] as const;
const text = (b: { json: Uint8Array }) =>
  Buffer.from(b.json)
    .toString()
    .replace(/"computed_at":"[^"]*"/g, '"computed_at":"-"');

async function answers(engine: InThreadEngine, gen: LoadedGeneration): Promise<string[]> {
  const out: string[] = [];
  for (const query of QUERIES)
    for (const window of WINDOWS)
      out.push(text(await engine.answer(gen, { params: analyseSearch({ query, limit: 50, window }), patterns: false })));
  return out;
}

test("the next generation starts with the served one's words for the same posts; its answers are the cold answers", async () => {
  const dir = await pipedSampleDir();
  const layout = dataDirLayout(dir);
  const engine = new InThreadEngine();
  const first = await engine.load(generationDir(layout, (await readCurrent(layout))!), null);
  await answers(engine, first);
  await runPipeline(dir, ['publish']);
  const nextDir = generationDir(layout, (await readCurrent(layout))!);
  const next = await engine.load(nextDir, first);
  assert.is.not(next.id, first.id);

  const kept = inheritRowWords(first, next);
  assert.ok(kept > 50, `${kept} rows kept`);
  assert.is(inheritRowWords(first, next), 0, 'once: a generation whose cache exists keeps its own');
  // Rows that are other posts in the new generation keep nothing.
  const elsewhere = await engine.load(nextDir, null);
  const uuid: typeof elsewhere.index.uuid = Object.create(elsewhere.index.uuid);
  uuid.get = () => 'another post';
  const moved: LoadedGeneration = { ...elsewhere, index: { ...elsewhere.index, uuid } };
  assert.is(inheritRowWords(first, moved), 0);

  // Built on the kept words, and cold on a generation loaded on its own: the same answers.
  const cold = new InThreadEngine();
  const alone = await cold.load(nextDir, null);
  assert.equal(await answers(engine, next), await answers(cold, alone));
});

test.run();
