// The narrative map's search finds a story by its tags and by the words of its posts (docs/fields.md,
// "Map search"): 24 hand-written posts of a ferry strike, every one tagged #FerryStrike, most of them
// about cancelled sailings without the word "ferry", planted into the committed sample (which has a
// metro strike of its own); the whole pipeline, then a real server. The ranking rules on real
// indexes: a narrative named by a word above one whose posts mention it, many posts above one.
import path from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { terms } from '../../core/text/analyzer.ts';
import { buildBm25FromCounts, buildBm25FromTerms } from '../../core/ranking/bm25.ts';
import { tagWords } from '../../core/maps/tag-words.ts';
import { rankNarratives } from '../../serve/maps/narrative-rank.ts';
import type { RunningServer } from '../../serve/server.ts';
import { callApi } from '../helpers/http.ts';
import { AS_OF, readSnapshot, runPipeline, sampleDataDir } from '../helpers/pipeline.ts';
import { testServer } from '../helpers/server.ts';
import { cleanupTmp, writeLines } from '../helpers/tmp.ts';

const SAYINGS = [
  'All sailings to the island cancelled again today, the crews walked out at dawn.',
  'Stuck at the harbour with the car, no crossing until Thursday at the earliest.',
  'The ferry crews want the night shift allowance back, the operator says no.',
  'Third day without a crossing: the island school is running on video calls.',
  'Harbour master says the morning sailing is off, the picket line is at the ramp.',
  'No ferry to the mainland, so the hospital appointments are being moved by air.',
  'The operator offers a two percent raise, the crews voted it down within an hour.',
  'Queue of lorries at the terminal, the sailings are cancelled until the talks end.',
];
const CLOSINGS = ['Islanders are running out of patience.', 'Talks resume on Monday.', 'Check the timetable before you drive down.'];

function ferryStory(asOf: Date) {
  return Array.from({ length: 24 }, (_, i) => {
    const published = new Date(asOf.getTime() - 3 * 86_400_000 + i * 9_000_000);
    return {
      uuid: `ferry-story-${String(i).padStart(2, '0')}`,
      platform: ['x', 'threads', 'reddit'][i % 3],
      content_type: 'text',
      creator_id: 800_000 + i,
      creator_handle: `islander_${i}`,
      title: null,
      description: `${SAYINGS[i % SAYINGS.length]} ${CLOSINGS[i % CLOSINGS.length]}`,
      tags: ['#FerryStrike'],
      published_at: published.toISOString(),
      observed_at: new Date(published.getTime() + 600_000).toISOString(),
      like_count: 10 + i,
      comment_count: i % 7,
      share_count: i % 4,
      view_count: 300 + 17 * i,
      language: 'en',
    };
  });
}

let s: RunningServer;
/** The narrative holding most of the ferry posts, per window. */
const ferryNarrative = new Map<string, { id: string; label: string; caught: number }>();
/** Every narrative most of whose members are ferry posts (a window may split the story). */
const ferryMostly = new Set<string>();

test.before(async () => {
  const d = sampleDataDir();
  writeLines(path.join(d, 'landing', 'ferry.ndjson'), ferryStory(AS_OF));
  await runPipeline(d, ['run'], AS_OF);
  const members = await readSnapshot(d, 'narrative-members', 'narrative_id, window_key, uuid');
  const labels = new Map((await readSnapshot(d, 'narratives', 'id, label')).map((r) => [r.id as string, r.label as string]));
  const caught = new Map<string, number>();
  for (const m of members)
    if ((m.uuid as string).startsWith('ferry-story-'))
      caught.set(m.narrative_id as string, (caught.get(m.narrative_id as string) ?? 0) + 1);
  const size = new Map<string, number>();
  for (const m of members) size.set(m.narrative_id as string, (size.get(m.narrative_id as string) ?? 0) + 1);
  for (const [id, n] of caught) {
    if (n > 0.5 * size.get(id)!) ferryMostly.add(id);
    const w = id.split('-')[0]!;
    if (n > (ferryNarrative.get(w)?.caught ?? 0)) ferryNarrative.set(w, { id, label: labels.get(id)!, caught: n });
  }
  s = await testServer(d);
});

test.after(async () => {
  await s?.close();
  cleanupTmp();
});

const search = async (q: string, window?: string) => {
  const r = await callApi(
    s.baseUrl,
    s.demo.secret,
    'GET',
    `/narratives/search?q=${encodeURIComponent(q)}${window ? `&window=${window}` : ''}`,
  );
  assert.is(r.status, 200, JSON.stringify(r.json));
  return r.json as { items: Array<{ id: string; label: string; text_rank: number; top_tags: string[] }> };
};

test('the ferry story is a narrative of the 7d window whose label does not say "ferry"', () => {
  const f = ferryNarrative.get('7d');
  assert.ok(f && f.caught >= 18, `7d: the ferry posts' narrative holds ${f?.caught} of 24`);
  assert.not.ok(terms(f!.label).includes('ferry'), `its label "${f!.label}" says ferry: the test would not test the member words`);
});

for (const q of ['ferry', 'ferry strike', '#ferrystrike', 'FerryStrike', '#FerryStrike', 'sailings cancelled']) {
  test(`q=${q} finds the ferry story's narrative first`, async () => {
    for (const w of ['7d', '30d', 'all']) {
      const want = ferryNarrative.get(w)!;
      const r = await search(q, w);
      assert.ok(r.items.length > 0, `${w}: nothing for "${q}"`);
      assert.is(r.items[0]!.id, want.id, `${w}: "${q}" ranks "${r.items[0]!.label}" above "${want.label}"`);
    }
    // Without a window: a narrative of the ferry story (in any window) leads.
    const all = await search(q);
    assert.ok(ferryMostly.has(all.items[0]!.id), `"${q}" ranks "${all.items[0]!.label}" first`);
  });
}

test('the metro strike still answers "metro strike" before the ferry story', async () => {
  const r = await search('metro strike', 'all');
  assert.ok(r.items.length > 1);
  assert.is.not(r.items[0]!.id, ferryNarrative.get('all')!.id);
  assert.match(`${r.items[0]!.label} ${r.items[0]!.top_tags.join(' ')}`.toLowerCase(), /metro|transit/);
});

test('a compound tag splits into the words the corpus knows, not into fragments', () => {
  const known = new Map(
    Object.entries({ ferry: 9, strike: 30, formula: 15, recall: 40, stop: 5, mother: 7, day: 90, fri: 4, friday: 60, ferrystrike: 20 }),
  );
  const postsWith = (t: string) => known.get(t) ?? 0;
  const words = (tag: string, tagged = 20) => tagWords(tag, postsWith, (t) => (t === tag ? tagged : 20));
  assert.equal(words('ferrystrike'), ['ferry', 'strike']);
  assert.equal(words('formularecall'), ['formula', 'recall']);
  assert.equal(
    words('stoptheferrystrike'),
    ['stop', 'ferrystrike', 'ferry', 'strike'],
    'a part that is a compound tag itself: its words too',
  );
  assert.equal(words('stopthestrike'), ['stop', 'strike']);
  assert.equal(words('mothersday'), ['mother', 'day']);
  assert.equal(words('ferry_strike2026'), ['ferry', 'strike', '2026']);
  assert.equal(words('ferry'), [], 'a word alone is no compound');
  assert.equal(words('ferrystrikz'), [], 'an unknown part: no split');
  assert.equal(words('stopferrz'), []);
  assert.equal(words('friday', 3), [], 'a word in its own right: most posts holding it are not tagged with it');
  assert.equal(words('friday', 30), ['fri', 'day'], 'a word as good as only ever a tag is split like any other');
});

test('ranking: named by the word above mentioned by posts; many posts above one', () => {
  // Four narratives of 20 posts: 0 names "ferry" in its label; 1 has 15 posts saying it; 2 has one; 3 none.
  const headline = buildBm25FromTerms([terms('ferry strike'), terms('metro strike'), terms('bake sale'), terms('garden')]);
  const vocab = ['ferry', 'strike', 'metro'];
  const members = buildBm25FromCounts(
    vocab,
    [
      { ids: [0, 1], counts: [2, 20] },
      { ids: [0, 1, 2], counts: [15, 20, 20] },
      { ids: [0], counts: [1] },
      { ids: [2], counts: [3] },
    ],
    [20, 20, 20, 20],
  );
  const ranked = rankNarratives(headline, members, [20, 20, 20, 20], terms('ferry'));
  assert.equal(
    ranked.map((r) => r.row),
    [0, 1, 2],
  );
  // The same number of posts saying it weighs more in a small narrative than in a large one.
  const sized = rankNarratives(
    null,
    buildBm25FromCounts(
      vocab,
      [
        { ids: [0], counts: [5] },
        { ids: [0], counts: [5] },
      ],
      [400, 10],
    ),
    [400, 10],
    ['ferry'],
  );
  assert.equal(
    sized.map((r) => r.row),
    [1, 0],
    'the small narrative (row 1) first, though ties go to the lower row',
  );
  assert.equal(rankNarratives(headline, members, [20, 20, 20, 20], terms('unheard')), []);
});

test.run();
