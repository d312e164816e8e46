// fixtures/crisislex.ts, the real-data bench's loaders, on tiny hand-written files in both
// CrisisLex layouts: quoted texts with commas, quotes and newlines; duplicate ids; the T26
// informativeness values that mean off-topic; tweet times from snowflake ids; the everyday mix;
// the arrival of tweets in whole hours.
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import {
  everydayTexts,
  hourlyArrivals,
  mixEveryday,
  readT26,
  readT6,
  snowflakeTime,
  tweetPost,
  HOUR_MS,
  type LabelledTweet,
} from '../../fixtures/crisislex.ts';
import { cleanupTmp, tmpDir } from '../helpers/tmp.ts';

test.after.each(cleanupTmp);

test('a snowflake id gives the tweet time Twitter reports for it', () => {
  // Twitter's API documentation's example tweet 1050118621198921728: created Wed Oct 10 20:19:24 +0000 2018.
  assert.is(snowflakeTime('1050118621198921728'), 1539202764211);
  assert.is(new Date(snowflakeTime("'1050118621198921728'")).toISOString(), '2018-10-10T20:19:24.211Z');
  assert.throws(() => snowflakeTime('12a4'), /not a tweet id/);
});

function write(dir: string, crisis: string, text: string): void {
  fs.mkdirSync(path.join(dir, crisis), { recursive: true });
  fs.writeFileSync(path.join(dir, crisis, 'tweets.csv'), text);
}

test('T6: quoted texts with commas, quotes and newlines; first row of a repeated id; labels', () => {
  const dir = tmpDir();
  write(
    dir,
    '2013_B',
    `tweet id, tweet, label
'1050118621198921728',"Flood, again: ""stay safe""
everyone",on-topic
'1050118621198921729',"just lunch",off-topic
'1050118621198921728',"Flood, again (a repeat)",on-topic
`,
  );
  write(dir, '2012_A', `tweet id, tweet, label\n'325208201740029952',"Boston, MA",on-topic\n`);
  const t = readT6(dir);
  assert.equal(
    t.map((x) => [x.uuid, x.crisis, x.onTopic, x.infoType]),
    [
      ['crisislex-325208201740029952', '2012_A', true, null],
      ['crisislex-1050118621198921728', '2013_B', true, null],
      ['crisislex-1050118621198921729', '2013_B', false, null],
    ],
  );
  assert.is(t[1]!.text, 'Flood, again: "stay safe"\neveryone');
  assert.is(t[1]!.time, 1539202764211);
  write(dir, '2013_C', `tweet id, tweet, label\n'1',"x",maybe\n`);
  assert.throws(() => readT6(dir), /unknown label/);
});

test('T26: not related and not applicable are off-topic; the information type is the story', () => {
  const dir = tmpDir();
  write(
    dir,
    '2013_Fire',
    `Tweet ID, Tweet Text, Information Source, Information Type, Informativeness
"1050118621198921728","Donate here, please",Outsiders,Donations and volunteering,Related and informative
"1050118621198921729","so sad",Outsiders,Sympathy and support,Related - but not informative
"1050118621198921730","my cat, my ""life""",Not labeled,Not labeled,Not related
"1050118621198921731","?",Not applicable,Not applicable,Not applicable
`,
  );
  const t = readT26(dir);
  assert.equal(
    t.map((x) => [x.onTopic, x.infoType]),
    [
      [true, 'Donations and volunteering'],
      [true, 'Sympathy and support'],
      [false, null],
      [false, null],
    ],
  );
  assert.is(t[2]!.text, 'my cat, my "life"');
});

test('everyday tweets: a seeded choice, spread evenly over the span, off-topic', () => {
  const dir = tmpDir();
  fs.writeFileSync(path.join(dir, 'b_text.txt'), 'b0\n\nb2\n');
  fs.writeFileSync(path.join(dir, 'a_text.txt'), Array.from({ length: 20 }, (_, i) => `a${i}`).join('\n') + '\n');
  fs.writeFileSync(path.join(dir, 'a_labels.txt'), '0\n');
  const texts = everydayTexts(dir);
  assert.is(texts.length, 22, 'blank lines and label files skipped');
  assert.equal(texts.slice(-2), [
    { key: 'b-0', text: 'b0' },
    { key: 'b-2', text: 'b2' },
  ]);
  const mix = mixEveryday(texts, 10, 1000, 2000);
  assert.equal(mix, mixEveryday(texts, 10, 1000, 2000), 'the same choice every time');
  assert.is(new Set(mix.map((m) => m.uuid)).size, 10);
  assert.equal(
    mix.map((m) => m.time),
    [1050, 1150, 1250, 1350, 1450, 1550, 1650, 1750, 1850, 1950],
  );
  assert.ok(mix.every((m) => m.crisis === null && !m.onTopic && m.uuid.startsWith('everyday-')));
  assert.not.equal(mix, mixEveryday(texts, 10, 1000, 2000, 7), 'another seed, another choice');
  assert.throws(() => mixEveryday(texts, 23, 0, 1), /23 everyday tweets asked/);
});

test('arrivals: whole hours in time order, about equal parts, the last as of the given instant', () => {
  const at = (h: number, m: number) => Date.UTC(2013, 3, 15, h, m);
  const tweets: LabelledTweet[] = [
    [0, 5],
    [0, 50],
    [1, 0],
    [1, 1],
    [1, 2],
    [3, 30],
    [4, 0],
    [4, 59],
    [7, 0],
    [9, 9],
  ].map(([h, m], i) => ({ uuid: `t${i}`, text: '', time: at(h!, m!), crisis: 'c', onTopic: true, infoType: null }));
  const asOf = at(9, 9) + 1000;
  const parts = hourlyArrivals([...tweets].reverse(), 3, asOf);
  assert.equal(
    parts.map((p) => p.tweets.map((t) => t.uuid)),
    [
      ['t0', 't1', 't2', 't3', 't4'],
      ['t5', 't6', 't7'],
      ['t8', 't9'],
    ],
  );
  assert.equal(
    parts.map((p) => p.asOfMs),
    [at(2, 0), at(5, 0), asOf],
  );
  assert.equal(
    parts.map((p) => p.hours),
    [2, 2, 2],
  );
  for (const p of parts.slice(0, -1)) assert.is(p.asOfMs % HOUR_MS, 0, 'an arrival ends at an hour boundary');
  assert.is(hourlyArrivals(tweets, 1, asOf).length, 1);
});

test('a tweet as a post: platform x, its time, a creator fixed by its uuid', () => {
  const t: LabelledTweet = { uuid: 'crisislex-1', text: 'hi', time: 1539202764211, crisis: 'c', onTopic: true, infoType: null };
  const p = tweetPost(t);
  assert.equal(
    { ...p, creator_id: undefined },
    { uuid: 'crisislex-1', platform: 'x', published_at: '2018-10-10T20:19:24.211Z', description: 'hi', creator_id: undefined },
  );
  assert.is(tweetPost(t).creator_id, p.creator_id);
  assert.ok(Number.isInteger(p.creator_id) && Number(p.creator_id) >= 1 && Number(p.creator_id) <= 20_011);
});

test.run();
