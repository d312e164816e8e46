// A narrative's member reads (serve/generation/member-reads.ts), primed when the generation loads
// and read by its detail and trajectory, are what a plain count over its members gives: the top
// creators by posts (per platform), every platform's share, and each day's posts, engagement,
// spike and feelings.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { dataDirLayout } from '../../core/infra/data-dir.ts';
import { DAY_MS } from '../../core/snapshots/windows.ts';
import { generationDir, readCurrent } from '../../core/snapshots/generations.ts';
import { spikeDays } from '../../core/maps/daily-signals.ts';
import { feelingCode, feelingCodeOfIds, sentimentOfCounts } from '../../core/maps/sentiment.ts';
import { loadGeneration, type LoadedGeneration } from '../../serve/generation/loaded-generation.ts';
import { memberSplit } from '../../serve/generation/member-reads.ts';
import { pipedSampleDir } from '../helpers/pipeline.ts';
import { cleanupTmp } from '../helpers/tmp.ts';

test.after(() => cleanupTmp());

/** The split as the plainest code has it: a count per (creator, platform), all of them sorted. */
function plainSplit(gen: LoadedGeneration, members: Int32Array) {
  const { platform, platforms, creatorId, creatorHandle } = gen.content;
  const name = (c: number) => platforms[c] ?? 'unknown';
  const pairs = new Map<string, { creatorId: number; creatorHandle: string | null; platform: string; posts: number }>();
  const byPlatform = new Map<string, number>();
  for (const r of members) {
    byPlatform.set(name(platform[r]!), (byPlatform.get(name(platform[r]!)) ?? 0) + 1);
    if (Number.isNaN(creatorId[r]!)) continue;
    const key = `${creatorId[r]}/${platform[r]}`;
    const p = pairs.get(key) ?? { creatorId: creatorId[r]!, creatorHandle: null, platform: name(platform[r]!), posts: 0 };
    p.posts++;
    pairs.set(key, p);
  }
  // A creator's handle: its first member's (in rank order) that has one.
  for (const p of pairs.values())
    for (const r of members)
      if (creatorId[r] === p.creatorId && creatorHandle.get(r) !== null) {
        p.creatorHandle = creatorHandle.get(r);
        break;
      }
  return {
    creators: [...pairs.values()]
      .sort((a, b) => b.posts - a.posts || a.creatorId - b.creatorId || a.platform.localeCompare(b.platform))
      .slice(0, 50),
    platforms: [...byPlatform]
      .map(([platform, posts]) => ({ platform, posts, share: posts / members.length }))
      .sort((a, b) => b.posts - a.posts || a.platform.localeCompare(b.platform)),
  };
}

test('every tracked narrative gets its split and daily series at load, equal to a plain count', async () => {
  const dir = await pipedSampleDir();
  const layout = dataDirLayout(dir);
  const gen = await loadGeneration(generationDir(layout, (await readCurrent(layout))!));
  assert.ok(gen.maps.narratives.length > 5, `${gen.maps.narratives.length} narratives`);
  const { enrichment } = gen.index;
  for (const ln of gen.maps.narratives) {
    assert.ok(ln.reads, `${ln.narrative.id} primed`);
    const plain = plainSplit(gen, ln.members);
    assert.equal(ln.reads.split.creators, plain.creators, `${ln.narrative.id} creators`);
    assert.equal(ln.reads.split.platforms, plain.platforms, `${ln.narrative.id} platforms`);
    assert.equal([...ln.reads.split.platformCodes].sort(), [...new Set(Array.from(ln.members, (r) => gen.content.platform[r]!))].sort());

    const days = ln.dailyCounts.length;
    const posts = new Array<number>(days).fill(0);
    const engagement = new Array<number>(days).fill(0);
    const feelings = Array.from({ length: days }, () => new Float64Array(8));
    for (const r of ln.members) {
      const back = Math.floor((gen.index.asOfMs - gen.index.publishedAt[r]!) / DAY_MS);
      if (back < 0 || back >= days) continue;
      posts[days - 1 - back]!++;
      engagement[days - 1 - back]! += gen.index.likes[r]! + gen.index.comments[r]! + gen.index.shares[r]!;
      feelings[days - 1 - back]![feelingCode({ tone: enrichment.toneOf(r), moods: enrichment.moods.get(r) })]!++;
    }
    assert.equal(
      ln.reads.daily.map((d) => d.content_count),
      posts,
    );
    assert.equal(
      ln.reads.daily.map((d) => d.engagement),
      engagement,
    );
    assert.equal(
      ln.reads.daily.map((d) => d.spike),
      spikeDays(posts),
    );
    assert.equal(
      ln.reads.daily.map((d) => d.sentiment_score),
      feelings.map((f, i) => sentimentOfCounts(f, posts[i]!).score),
    );
    // The same figures as a first read computes them (an emergent narrative's path).
    assert.equal(memberSplit(gen, ln.members.slice()).creators, ln.reads.split.creators);
  }
});

test("a post's feeling from its mood ids is its feeling from its mood list", () => {
  const dict = ['joy', 'anger', 'calm', 'optimism', 'sadness', 'surprise'];
  for (const tone of [null, 'negative', 'neutral', 'positive'])
    for (let mask = 0; mask < 1 << dict.length; mask++) {
      const ids = dict.map((_, i) => i).filter((i) => mask & (1 << i));
      assert.is(
        feelingCodeOfIds(tone, ids, dict),
        feelingCode({ tone, moods: ids.map((i) => dict[i]!) }),
        `${tone} ${ids.map((i) => dict[i]).join(',')}`,
      );
    }
});

test.run();
