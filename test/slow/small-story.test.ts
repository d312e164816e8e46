// A small story in a word no post has used arrives through incremental runs, as a user drops their
// own posts in (issue 45's user trial; docs/fields.md, "Which posts form a narrative", step 5): 12 of
// the IslaLink ferry strike's 20 posts in one run, the other 8 an hour later. Its posts are too
// few for the new posts' own clustering, and the embedding does not set them apart; the bursting
// word does, over the whole window, the first run's left-out posts included. After the second run a
// narrative of the 7d and 30d windows holds the story, as after a full run on the same posts.
import path from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { NEW_WORD_STORIES, storyPosts } from '../../fixtures/new-word-stories.ts';
import { AS_OF, readSnapshot, runPipeline, pipedSampleDir } from '../helpers/pipeline.ts';
import { cleanupTmp, writeLines } from '../helpers/tmp.ts';

test.after.each(cleanupTmp);

const HOUR = 3_600_000;
const STORY = NEW_WORD_STORIES[0]!;

/** Per window, the most story posts one narrative holds and how many posts that narrative has. */
async function storyNarratives(d: string): Promise<Map<string, { story: number; size: number }>> {
  const members = await readSnapshot(d, 'narrative-members', 'window_key, narrative_id, uuid');
  const by = new Map<string, { window: string; story: number; size: number }>();
  for (const m of members) {
    const id = m.narrative_id as string;
    const n = by.get(id) ?? by.set(id, { window: m.window_key as string, story: 0, size: 0 }).get(id)!;
    n.size++;
    if ((m.uuid as string).startsWith(`story-${STORY.key}-`)) n.story++;
  }
  const best = new Map<string, { story: number; size: number }>();
  for (const n of by.values()) if (n.story > (best.get(n.window)?.story ?? 0)) best.set(n.window, n);
  return best;
}

test('a small new story dropped in over two incremental runs becomes a narrative, as in a full run', async () => {
  const d = await pipedSampleDir();
  const second = new Date(AS_OF.getTime() + 2 * HOUR);
  const posts = storyPosts(STORY, second);
  writeLines(path.join(d, 'landing', 'story-1.ndjson'), posts.slice(0, 12));
  await runPipeline(d, ['run'], new Date(AS_OF.getTime() + HOUR));
  writeLines(path.join(d, 'landing', 'story-2.ndjson'), posts.slice(12));
  await runPipeline(d, ['run'], second);
  const incremental = await storyNarratives(d);
  await runPipeline(d, ['run'], second, {}, { full: true });
  const full = await storyNarratives(d);
  for (const [name, found] of [
    ['incremental', incremental],
    ['full', full],
  ] as const)
    for (const w of ['7d', '30d']) {
      const n = found.get(w);
      assert.ok(n && n.story >= 18, `${name} ${w}: ${JSON.stringify(n)} story posts in one narrative`);
      assert.ok(n!.size - n!.story <= 2, `${name} ${w}: ${n!.size - n!.story} other posts in it`);
    }
});

test.run();
