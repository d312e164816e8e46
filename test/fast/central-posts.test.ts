// The posts a reader opens first (core/maps/central-posts.ts; docs/fields.md, "central_content_uuids"):
// members in centrality order without what the abuse lexicon flags and without a text said before
// (a retweet and its original are one), read in rounds; and the flagged share. Real strings.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { CENTRAL_POSTS, centralPosts, centralPostsOf, flaggedShare, sameTextKey } from '../../core/maps/central-posts.ts';
import { flaggedPost } from '../../core/text/abuse.ts';

test('same text: a retweet prefix (chained too), links, whitespace and case do not make another text', () => {
  const original = 'Flood waters reach the old bridge, rescue teams on site https://t.co/abc123';
  for (const t of [
    'RT @newsdesk: Flood waters reach the old bridge, rescue teams on site https://t.co/zzz999',
    'rt @a_b: RT @c.d:   flood waters reach the OLD bridge,\n rescue teams on site',
    'Flood waters reach the old bridge, rescue teams on site www.example.org/x',
    'Flood waters reach the old bridge, rescue teams on site\u00a0 ',
  ])
    assert.is(sameTextKey(t), sameTextKey(original), t);
  // Other words, or the handle kept inside the text, are another text.
  assert.is.not(sameTextKey('Flood waters reach the new bridge, rescue teams on site'), sameTextKey(original));
  assert.is.not(sameTextKey('Thanks @newsdesk: flood waters reach the old bridge, rescue teams on site'), sameTextKey(original));
  assert.is(sameTextKey('  https://t.co/abc  '), '');
});

const TEXTS = [
  'you stupid bitch, the bridge is closed again', // flagged
  'Flood waters reach the old bridge, rescue teams on site https://t.co/abc123',
  'RT @newsdesk: Flood waters reach the old bridge, rescue teams on site https://t.co/zzz999', // the one before, retweeted
  'What the f*ck is the council doing about the flood', // flagged (a spelling that dodges a word list)
  'flood waters reach the OLD bridge,   rescue teams on site', // the second again
  'Volunteers are filling sandbags at the school gym tonight',
  'The mayor says the evacuation order stays until Friday',
  '', // no words: repeats nothing
  '',
  'Power is back on in the north of the town',
];
const textOf = (r: number) => TEXTS[r % TEXTS.length]! + (r >= TEXTS.length && TEXTS[r % TEXTS.length] ? ` (${r})` : '');
const unknown = () => null;

test('central posts: the first K members, most central first, neither flagged nor said before', () => {
  assert.ok(flaggedPost(TEXTS[0]!) && flaggedPost(TEXTS[3]!), 'the planted posts are flagged');
  const members = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9];
  assert.equal(centralPosts(members, unknown, textOf, 5), [1, 5, 6, 7, 8]);
  assert.equal(centralPosts(members, unknown, textOf, 100), [1, 5, 6, 7, 8, 9]);
  // In another order the other copy comes first and stands for the text.
  assert.equal(centralPosts([4, 2, 1, 0, 9], unknown, textOf, 3), [4, 9]);
  assert.equal(centralPosts([], unknown, textOf), []);
  assert.is(CENTRAL_POSTS, 10);
  // Members 10.. have their own texts ("... (12)"): the first ten that are not flagged.
  const many = Array.from({ length: 40 }, (_, i) => i);
  const picked = centralPosts(many, unknown, textOf);
  assert.is(picked.length, CENTRAL_POSTS);
  assert.equal(picked, [1, 5, 6, 7, 8, 9, 11, 12, 14, 15]);
});

test('a stored flag decides without reading the text; rounds read twice what each cluster misses, one batch for all', async () => {
  const stored = new Map<number, boolean>([
    [21, true],
    [22, false],
  ]);
  // The long cluster's first 12 members are flagged by their texts: its pick takes three rounds.
  const text = (r: number) => (r === 22 ? TEXTS[0]! : r >= 100 && r < 112 ? `${TEXTS[3]} (${r})` : textOf(r));
  const read: number[][] = [];
  const clusters = [{ members: [21, 1, 2, 3, 22, 5, 6] }, { members: Array.from({ length: 60 }, (_, i) => 100 + i) }, { members: [] }];
  const got = await centralPostsOf(
    clusters,
    (r) => stored.get(r) ?? null,
    async (rows) => {
      read.push(rows);
      return new Map(rows.map((r) => [r, text(r)]));
    },
    4,
  );
  // 21 is flagged by its stored flag, 22 is not (its text would be): the stored flag is the rule's answer.
  assert.equal(got, [[1, 22, 5, 6], [112, 114, 115, 116], []]);
  assert.not.ok(read.flat().includes(21), 'a row flagged by its stored flag is not read');
  // Round 1: 8 of each (the short one has 6 left); round 2: 8 more of the long one (4 missing); round 3: 2 (1 missing).
  assert.equal(
    read.map((rows) => rows.length),
    [6 + 8, 8, 2],
  );
  for (const rows of read) assert.is(new Set(rows).size, rows.length, 'a row read once per round');
});

test('flagged share: flagged members over members, 0 without members', () => {
  assert.is(
    flaggedShare([0, 1, 2, 3, 4], (r) => r % 2 === 0),
    0.6,
  );
  assert.is(
    flaggedShare([], () => true),
    0,
  );
});

test.run();
