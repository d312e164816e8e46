// Search knows new words as soon as an incremental run has published them (issue 37): three stories
// whose names no fit has seen (fixtures/new-word-stories.ts) arrive in an incremental run over the
// committed sample. Their names are folded into the kept embedder (core/vectors/fold-in.ts), so a search for
// a name finds the story's posts that say it and, through its vector, those that do not; no
// unrelated post comes before them; and the answers match those after `run --full` (a refit), the
// rows a name query bills too (issue 46: 100 rows, 20 of them the story's, against 20 after the refit).
import path from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { dataDirLayout } from '../../core/infra/data-dir.ts';
import { embedderKnows } from '../../core/vectors/embedder.ts';
import { generationDir, readCurrent } from '../../core/snapshots/generations.ts';
import { loadSearchIndex, type SearchIndex } from '../../core/ranking/search-index.ts';
import { search } from '../../core/ranking/search.ts';
import { allStoryPosts, NEW_WORD_STORIES } from '../../fixtures/new-word-stories.ts';
import { AS_OF, runPipeline, summaryOf, pipedSampleDir } from '../helpers/pipeline.ts';
import { cleanupTmp, writeLines } from '../helpers/tmp.ts';

test.after.each(cleanupTmp);

const LATER = new Date(AS_OF.getTime() + 3 * 3_600_000);

async function served(d: string): Promise<SearchIndex> {
  const layout = dataDirLayout(d);
  return loadSearchIndex(generationDir(layout, (await readCurrent(layout))!), { enrichment: false });
}

/** Rows a search of each story's name returns with limit 100 (each billed), by window. */
function billed(index: SearchIndex): Map<string, number> {
  const out = new Map<string, number>();
  for (const s of NEW_WORD_STORIES)
    for (const window of ['7d', '30d'] as const)
      out.set(`${s.name} ${window}`, search(index, { query: s.name, limit: 100, window }).length);
  return out;
}

/** Per story query: how many of the first 20 rows are the story's, and the rank of its first stranger. */
function answers(index: SearchIndex): Map<string, { own: number; firstStranger: number }> {
  const out = new Map<string, { own: number; firstStranger: number }>();
  for (const s of NEW_WORD_STORIES)
    for (const query of s.queries) {
      const rows = search(index, { query, limit: 20, window: '30d' });
      const mine = (uuid: string) => uuid.startsWith(`story-${s.key}-`);
      const i = rows.findIndex((r) => !mine(r.uuid));
      out.set(query, { own: rows.filter((r) => mine(r.uuid)).length, firstStranger: i < 0 ? Infinity : i + 1 });
    }
  return out;
}

test('new names arriving in an incremental run are searchable at once, as after a refit', async () => {
  const d = await pipedSampleDir();
  writeLines(path.join(d, 'landing', 'stories.ndjson'), allStoryPosts(AS_OF));
  const inc = await runPipeline(d, ['run'], LATER);
  const features = summaryOf(inc, 'features');
  assert.is(features.mode, 'incremental');
  assert.ok(Number(features.foldedWords) >= 3, `words folded in: ${features.foldedWords}`);
  const index = await served(d);
  for (const s of NEW_WORD_STORIES) assert.ok(embedderKnows(index.embedder, s.name.toLowerCase()), `${s.name} has a vector`);
  const after = answers(index);
  const billedAfter = billed(index);
  for (const s of NEW_WORD_STORIES) {
    // The 15 posts that say the name come first, before any other post, the story's or not.
    const rows = search(index, { query: s.name, limit: 20, window: '30d' });
    const saying = rows.findIndex((r) => !(r.uuid.startsWith(`story-${s.key}-`) && r.lexicalRank !== null));
    assert.is(saying, 15, `"${s.name}": rank ${saying + 1} is ${rows[saying]?.uuid}`);
    const long = after.get(s.queries[1]!)!;
    assert.ok(long.firstStranger > 10, `"${s.queries[1]}": an unrelated post at rank ${long.firstStranger}`);
  }
  // The same data after a refit: the names in the fit. The incremental answers are as good.
  await runPipeline(d, ['run'], LATER, {}, { full: true });
  const refitIndex = await served(d);
  const refit = answers(refitIndex);
  // Issue 46's bar is 1.2x; on this 660-post sample the refit learns every story word (in 2 posts
  // of its sample) and the fold cannot, so the guard here is 2x (it was 5x: 99 rows against 20).
  // The bar is measured on 20,000 posts by `npm run bench -- new-words` (bench/RESULTS.md).
  for (const [query, rows] of billed(refitIndex))
    assert.ok(
      billedAfter.get(query)! <= 2 * rows,
      `"${query}" bills ${billedAfter.get(query)} rows after the incremental run, ${rows} after the refit`,
    );
  let gap = 0;
  for (const [query, a] of after) gap += (refit.get(query)!.own - a.own) / 20 / after.size;
  assert.ok(gap <= 0.05, `mean precision@20 after the refit exceeds the incremental run's by ${gap.toFixed(3)}`);
});

test.run();
