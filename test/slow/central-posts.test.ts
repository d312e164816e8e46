// The posts a reader opens first (docs/fields.md, "central_content_uuids", "flagged_share"; issue 45,
// item 5): a story planted into the committed sample (fixtures/planted-story.ts) with retweets of
// three of its posts and posts carrying slurs among its most central members. Its narratives and
// themes show none of those first and no text twice, say which share of their posts the lexicon
// flags, and keep every member in the members list (the tables and the free reads, a search's
// emergent narratives too): after a full run, an incremental one, and one over segments written
// before the features stage stored the flag.
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { plantedStory, type PlantedPost } from '../../fixtures/planted-story.ts';
import { openDuckDB, sqlString } from '../../core/infra/duckdb.ts';
import { dataDirLayout } from '../../core/infra/data-dir.ts';
import { generationDir, readCurrent, readManifest } from '../../core/snapshots/generations.ts';
import { segmentDir } from '../../core/snapshots/segments.ts';
import { flaggedPost } from '../../core/text/abuse.ts';
import { AS_OF, pipedSampleDir, readSnapshot, runPipeline, summaryOf } from '../helpers/pipeline.ts';
import { cleanupTmp, writeLines } from '../helpers/tmp.ts';
import { callApi } from '../helpers/http.ts';
import { testServer } from '../helpers/server.ts';

test.after.each(cleanupTmp);

const K = 10;
const HOUR = 3_600_000;
const LATER = new Date(AS_OF.getTime() + HOUR);
/** Several segments: an incremental run keeps some of them as they were. */
const ENV = { SEGMENT_ROWS: '150' };
const SLURS = ['fucking', 'shit', 'bitch'];

/** `n` retweets of `p` ("RT @its_author: its text" and a link of their own), published just after it. */
function retweets(p: PlantedPost, n: number, tag: string): PlantedPost[] {
  return Array.from({ length: n }, (_, j) => ({
    ...p,
    uuid: `rt-${tag}-${j}`,
    creator_id: 910_000 + j,
    creator_handle: `rt_${tag}_${j}`,
    description: `RT @${p.creator_handle}: ${p.description} https://t.co/${tag}${j}`,
    published_at: new Date(Date.parse(p.published_at) + (j + 1) * 60_000).toISOString(),
  }));
}

/** `n` posts telling the story of `from` in its words and a slur. */
function abusive(from: readonly PlantedPost[], n: number, tag: string): PlantedPost[] {
  return Array.from({ length: n }, (_, j) => ({
    ...from[j % from.length]!,
    uuid: `abuse-${tag}-${j}`,
    creator_id: 920_000 + j,
    creator_handle: `angry_${tag}_${j}`,
    description: `BrightBrew kombucha ${SLURS[j % SLURS.length]} mould recall, ${from[j % from.length]!.description}`,
  }));
}

/** The story (30 posts), 6 retweets of each of its first three posts and 6 posts with slurs. */
function plantedPosts(asOf: Date): PlantedPost[] {
  const story = plantedStory(asOf);
  return [...story, ...story.slice(0, 3).flatMap((p, k) => retweets(p, 6, `${k}`)), ...abusive(story.slice(5, 11), 6, 'a')];
}

/** A text as the test compares two: no retweet prefix, no links, whitespace and case aside. */
const sameText = (t: string) =>
  t
    .replace(/^(RT @\w+: )+/, '')
    .replace(/https?:\/\/\S+/g, '')
    .replace(/\s+/g, ' ')
    .trim()
    .toLowerCase();

const textOfPost = (p: Record<string, unknown>) => [p.title, p.description].filter(Boolean).join('. ');

/** Every post's text (title and description) by uuid. */
async function texts(d: string): Promise<Map<string, string>> {
  return new Map((await readSnapshot(d, 'posts', 'uuid, title, description')).map((p) => [p.uuid as string, textOfPost(p)]));
}

/** The first k of `members` (most central first) that are not flagged and say no text said before. */
function expectedCentral(members: readonly string[], text: Map<string, string>, k = K): string[] {
  const said = new Set<string>();
  const out: string[] = [];
  for (const u of members) {
    const t = text.get(u)!;
    if (out.length === k || flaggedPost(t) || (sameText(t) && said.has(sameText(t)))) continue;
    said.add(sameText(t));
    out.push(u);
  }
  return out;
}

interface StoryNarrative {
  id: string;
  key: string;
  window: string;
  themeId: string;
  flaggedShare: number;
  central: string[];
  /** Its members, most central first. */
  members: string[];
}

/** Per window, the narrative holding most of the planted story's posts. */
async function storyNarratives(d: string): Promise<StoryNarrative[]> {
  const rows = await readSnapshot(
    d,
    'narratives',
    'id, narrative_key, window_key, theme_id, content_count, flagged_share, central_content_uuids',
  );
  const members = await readSnapshot(d, 'narrative-members', 'narrative_id, uuid', 'ORDER BY narrative_id, rank');
  const byNarrative = new Map<string, string[]>();
  for (const m of members)
    byNarrative.set(m.narrative_id as string, [...(byNarrative.get(m.narrative_id as string) ?? []), m.uuid as string]);
  const out: StoryNarrative[] = [];
  for (const w of ['7d', '30d', '90d', 'all']) {
    const planted = (id: string) => (byNarrative.get(id) ?? []).filter((u) => u.startsWith('planted-story-')).length;
    const best = rows.filter((r) => r.window_key === w).sort((a, b) => planted(b.id as string) - planted(a.id as string))[0]!;
    const mine = byNarrative.get(best.id as string)!;
    assert.ok(planted(best.id as string) >= 24, `${w}: the story's narrative holds ${planted(best.id as string)} of its 30 posts`);
    assert.is(mine.length, Number(best.content_count), `${w}: the members list holds every member`);
    out.push({
      id: best.id as string,
      key: best.narrative_key as string,
      window: w,
      themeId: best.theme_id as string,
      flaggedShare: best.flagged_share as number,
      central: best.central_content_uuids as string[],
      members: mine,
    });
  }
  return out;
}

/** The story's narratives: central posts by the rule, and planted posts they skip among the first members; flagged_share. */
function checkNarratives(found: readonly StoryNarrative[], text: Map<string, string>): void {
  for (const n of found) {
    const flaggedMembers = n.members.filter((u) => flaggedPost(text.get(u)!));
    // What the plain first members would have shown: a post with a slur, and a text twice.
    const first = n.members.slice(0, 2 * K);
    assert.ok(
      first.slice(0, K).some((u) => u.startsWith('abuse-')),
      `${n.window}: a slur among the first ${K} members`,
    );
    assert.ok(
      new Set(first.map((u) => sameText(text.get(u)!))).size < first.length,
      `${n.window}: a text repeated among the first ${2 * K}`,
    );
    assert.equal(n.central, expectedCentral(n.members, text), `${n.window}: the first ${K} members neither flagged nor said before`);
    assert.is(n.central.length, K);
    assert.not.ok(
      n.central.some((u) => u.startsWith('abuse-')),
      n.window,
    );
    assert.is(new Set(n.central.map((u) => sameText(text.get(u)!))).size, K, `${n.window}: no text twice`);
    // The share flagged is the planted posts' share: the sample's own posts of the story carry no slur.
    const planted = n.members.filter((u) => u.startsWith('abuse-'));
    assert.ok(planted.length >= 5, `${n.window}: ${planted.length} planted posts with slurs are members`);
    assert.equal(flaggedMembers, planted, `${n.window}: the flagged members are the planted ones`);
    assert.ok(Math.abs(n.flaggedShare - planted.length / n.members.length) < 1e-12, `${n.window}: flagged_share ${n.flaggedShare}`);
  }
}

/** The story's themes: central posts of their members, none flagged, no text twice; flagged_share over their narratives' members. */
async function checkThemes(d: string, found: readonly StoryNarrative[], text: Map<string, string>): Promise<void> {
  const themes = new Map(
    (await readSnapshot(d, 'themes', 'id, content_count, flagged_share, central_content_uuids')).map((t) => [t.id, t]),
  );
  const narratives = await readSnapshot(d, 'narratives', 'id, theme_id');
  const members = await readSnapshot(d, 'narrative-members', 'narrative_id, uuid');
  for (const n of found) {
    const t = themes.get(n.themeId)!;
    const of = new Set(narratives.filter((x) => x.theme_id === n.themeId).map((x) => x.id));
    const mine = new Set(members.filter((m) => of.has(m.narrative_id)).map((m) => m.uuid as string));
    const central = t.central_content_uuids as string[];
    assert.is(central.length, K, `${n.window}: theme ${t.id}`);
    for (const u of central) assert.ok(mine.has(u) && !flaggedPost(text.get(u)!), `${n.window}: ${u} a member, not flagged`);
    assert.is(new Set(central.map((u) => sameText(text.get(u)!))).size, K, `${n.window}: no text twice`);
    const flagged = [...mine].filter((u) => flaggedPost(text.get(u)!)).length;
    assert.ok(flagged >= 5 && Math.abs((t.flagged_share as number) - flagged / mine.size) < 1e-12, `${n.window}: ${t.flagged_share}`);
  }
}

/** The planted posts' stored flags: those with slurs flagged, the others not (null: a row kept from a segment without flags). */
async function checkStoredFlags(d: string, unknown: ReadonlySet<string> = new Set()): Promise<void> {
  const flags = new Map((await readSnapshot(d, 'enrichment', 'row_id, flagged')).map((r) => [Number(r.row_id), r.flagged]));
  const planted = (await readSnapshot(d, 'posts', 'row_id, uuid')).filter((p) => /^(planted-story|rt|abuse)-/.test(p.uuid as string));
  assert.ok(planted.length >= 54, `${planted.length} planted posts`);
  for (const p of planted) {
    const u = p.uuid as string;
    assert.is(flags.get(Number(p.row_id)), unknown.has(u) ? null : u.startsWith('abuse-'), u);
  }
}

/** Every member of a narrative, paging through its detail's posts; and its central posts. */
async function detailPages(api: (p: string) => Promise<{ status: number; json: any }>, id: string) {
  const uuids: string[] = [];
  let central: string[] = [];
  for (let offset: number | null = 0; offset !== null;) {
    const page = await api(`/narratives/${encodeURIComponent(id)}?limit=7&offset=${offset}`);
    assert.is(page.status, 200);
    uuids.push(...page.json.posts.items.map((p: { uuid: string }) => p.uuid));
    central = page.json.central_posts.map((p: { uuid: string }) => p.uuid);
    offset = page.json.posts.next_offset;
  }
  return { uuids, central };
}

/** The free reads: the detail's central posts first, its posts every member in order; flagged_share on the objects; emergent ones too. */
async function checkApi(d: string, found: readonly StoryNarrative[], text: Map<string, string>): Promise<void> {
  const s = await testServer(d);
  const api = (p: string, body?: unknown) => callApi(s.baseUrl, s.demo.secret, body ? 'POST' : 'GET', p, { body });
  try {
    for (const n of found) {
      const { uuids, central } = await detailPages(api, n.id);
      assert.equal(uuids, n.members, `${n.window}: paging through the posts gives every member, most central first`);
      assert.equal(central, n.central, `${n.window}: central_posts are central_content_uuids`);
      const trending = (await api(`/narratives/trending?window=${n.window}&limit=100`)).json.items.find(
        (x: { id: string }) => x.id === n.id,
      );
      assert.is(trending.flagged_share, n.flaggedShare);
      const theme = (await api(`/themes/${n.themeId}`)).json;
      const stored = (await readSnapshot(d, 'themes', 'central_content_uuids, flagged_share', `WHERE id = '${n.themeId}'`))[0]!;
      assert.equal(
        theme.central_posts.map((p: { uuid: string }) => p.uuid),
        stored.central_content_uuids,
      );
      assert.is(theme.theme.flagged_share, stored.flagged_share);
    }
    // A search's emergent narrative of the story: its flagged share, and its central posts by the same rule.
    const answer = (await api('/search', { query: 'brightbrew kombucha mould recall', limit: 100, window: '7d' })).json;
    const emergent = answer.narratives.find(
      (x: { source: string; id: string }) => x.source === 'emergent' && /kombucha|brightbrew|mould/i.test(JSON.stringify(x)),
    );
    assert.ok(emergent, answer.narratives.map((x: { label: string }) => x.label).join(' | '));
    const { uuids, central } = await detailPages(api, emergent.id);
    const flagged = uuids.filter((u) => flaggedPost(text.get(u)!)).length;
    assert.ok(flagged > 0, 'the emergent narrative holds posts with slurs');
    assert.ok(Math.abs(emergent.flagged_share - flagged / uuids.length) < 1e-12, `emergent flagged_share ${emergent.flagged_share}`);
    assert.equal(central, expectedCentral(uuids, text));
  } finally {
    await s.close();
  }
}

/** The full run the tests start from (made once, each test its own copy: pipedSampleDir). */
const PLANTED_RUN = { env: ENV, landing: { 'planted.ndjson': plantedPosts(AS_OF) } };

test('a full run: central posts skip slurs and retweets among the most central members; flagged_share; every member kept', async () => {
  for (const p of plantedPosts(AS_OF)) assert.is(flaggedPost(p.description), p.uuid.startsWith('abuse-'), p.uuid);
  const d = await pipedSampleDir(PLANTED_RUN);
  await checkStoredFlags(d);
  const text = await texts(d);
  const found = await storyNarratives(d);
  checkNarratives(found, text);
  await checkThemes(d, found, text);
  await checkApi(d, found, text);
});

/** Posts of the story an hour later: 4 more retweets of its second post and 4 more posts with slurs. */
function laterPosts(): PlantedPost[] {
  const story = plantedStory(AS_OF);
  return [...retweets(story[1]!, 4, 'late'), ...abusive(story.slice(12, 16), 4, 'late')].map((p, i) => ({
    ...p,
    published_at: new Date(AS_OF.getTime() + (i + 1) * 60_000).toISOString(),
    observed_at: new Date(AS_OF.getTime() + (i + 2) * 60_000).toISOString(),
  }));
}

/** A full run on the sample and the planted posts (PLANTED_RUN), then an incremental one an hour later with laterPosts. */
async function fullThenLater(beforeLater: (d: string) => Promise<void> = async () => {}) {
  const d = await pipedSampleDir(PLANTED_RUN);
  const before = await storyNarratives(d);
  await beforeLater(d);
  writeLines(path.join(d, 'landing', 'later.ndjson'), laterPosts());
  const run = await runPipeline(d, ['run'], LATER, ENV);
  assert.is(summaryOf(run, 'narratives').mode, 'incremental');
  const after = await storyNarratives(d);
  after.forEach((n, i) => {
    assert.is(n.key, before[i]!.key, `${n.window}: the story's narrative continues`);
    assert.ok(
      n.members.filter((u) => u.startsWith('abuse-late-') || u.startsWith('rt-late-')).length >= 6,
      `${n.window}: the new posts joined it`,
    );
  });
  return { d, after };
}

test('an incremental run: the narratives it carries over have their central posts and flagged_share by the same rule', async () => {
  const { d, after } = await fullThenLater();
  await checkStoredFlags(d);
  const text = await texts(d);
  checkNarratives(after, text);
  await checkThemes(d, after, text);
});

test('segments written before the flag: an incremental run reads their members’ flags from their texts, with the same result', async () => {
  let old = new Set<string>();
  const { d, after } = await fullThenLater(async (d) => {
    // As a generation published before the flag existed: no segment's enrichment.parquet has the column.
    const layout = dataDirLayout(d);
    const gen = (await readCurrent(layout))!;
    const dir = generationDir(layout, gen);
    const db = await openDuckDB();
    try {
      for (const s of (await readManifest(layout, gen)).segments!) {
        const file = path.join(segmentDir(dir, s.id), 'enrichment.parquet');
        await db.run(
          `COPY (SELECT * EXCLUDE (flagged) FROM read_parquet(${sqlString(file)})) TO ${sqlString(`${file}.tmp`)} (FORMAT parquet)`,
        );
        fs.renameSync(`${file}.tmp`, file);
      }
    } finally {
      db.close();
    }
    old = new Set((await readSnapshot(d, 'posts', 'uuid')).map((r) => r.uuid as string));
  });
  // The rows kept from those segments have no flag; the new posts' are stored.
  await checkStoredFlags(d, old);
  const text = await texts(d);
  checkNarratives(after, text);
  await checkThemes(d, after, text);
});

test.run();
