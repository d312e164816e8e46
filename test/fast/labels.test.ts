// Narrative labels a reader believes (docs/fields.md, "label", "summary"): no stop or filler words,
// no word the narratives share, no clipped words, hashtags as written, a summary that says what the
// posts say. Pure functions over real strings.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import fs from 'node:fs';
import path from 'node:path';
import { terms, termsAndSurfaces } from '../../core/text/analyzer.ts';
import { TWEETEVAL_DIR } from '../../fixtures/tweeteval.ts';
import { cleanForSummary, describeFromWords, describeNarrative, postWords, summarise } from '../../core/maps/label-and-summary.ts';
import { readable } from '../../core/text/readable.ts';
import { labelWord, showLabel, surfaceForms } from '../../core/maps/label-words.ts';
import { ClassCounts, labelFrom, labelKeys } from '../../core/maps/labels.ts';
import { ROOT } from '../helpers/child.ts';

test('label words: no stop or filler words, not even as the plural fold clips them', () => {
  for (const w of ['does', 'doe', 'anyone', 'actually', 'every', 'again', 'just']) assert.not.ok(labelWord(w), w);
  for (const w of ['kombucha', 'recall', 'ferry', 'strike', 'brightbrew']) assert.ok(labelWord(w), w);
  assert.not.ok(labelWord('x'), 'one character');
  assert.not.ok(labelWord('2026'), 'no letter');
  // "Does anyone actually like kombucha" offers only "kombucha" as a label key.
  assert.equal(labelKeys(terms('Does anyone actually like kombucha?', 'en')), ['kombucha']);
});

test('a bigram never spans a word that is no label word', () => {
  const keys = labelKeys(['ferry', 'strike', 'actually', 'ends']);
  assert.ok(keys.includes('ferry strike'));
  assert.not.ok(keys.includes('strike ends'), keys.join('|'));
});

test('terms are shown as people wrote them: whole words, hashtags with their case', () => {
  const texts = ['Does the #SkincareScare ever end', 'Two phones lost, #SkincareScare again', 'my phones and the #skincarescare'];
  const forms = surfaceForms(texts);
  assert.is(forms.get('skincarescare'), '#SkincareScare');
  assert.is(forms.get('phone'), 'phones');
  assert.is(showLabel('skincarescare, phone', forms), '#SkincareScare, phones');
  // Capitals: kept for a name or an acronym written so nearly always, not for shouting.
  const caps = surfaceForms(['The NRA said', 'NRA again', 'WOW that was loud', 'WOW!', 'wow indeed', 'BrightBrew recall', 'Recall notice']);
  assert.is(caps.get('nra'), 'NRA');
  assert.is(caps.get('wow'), 'wow');
  assert.is(caps.get('brightbrew'), 'BrightBrew');
  assert.is(caps.get('recall'), 'recall');
  // A shouted post's words are no acronyms, however often they are written so.
  const loud = surfaceForms([
    'LIBERALS ARE STRONG IN EVIL AND DARK WAYS',
    'THEY LIKE THE DARK, THEY NEVER SAY HIS NAME',
    'The NRA said so',
  ]);
  assert.is(loud.get('dark'), 'dark');
  assert.is(loud.get('nra'), 'NRA');
});

test('a key most clusters share names none of them; a hashtag and its parts are named once', () => {
  const counts = new ClassCounts(4);
  const stories = [
    ['ferry', 'strike', 'union'],
    ['kombucha', 'recall', 'mould'],
    ['heat', 'wave', 'power'],
    ['marathon', 'training', 'shoes'],
  ];
  stories.forEach((words, c) => {
    for (let i = 0; i < 20; i++) counts.add(c, [...words, 'statement', `${words[0]} statement`]);
  });
  assert.ok(counts.sharedKeys().has('statement'));
  const top = counts.top(0, 10);
  assert.not.ok(
    top.some((t) => t.key === 'statement'),
    top.map((t) => t.key).join('|'),
  );
  assert.is(labelFrom([{ key: 'ferry statement' }, { key: 'ferry' }], 3, counts.sharedKeys()), 'ferry');
  assert.is(
    labelFrom([{ key: 'gamergate' }, { key: 'gamer gate' }, { key: 'gamergate gamer' }, { key: 'harassment' }], 3),
    'gamergate, harassment',
  );
});

test('the summary is the central post that says most of the label, without links, mentions and tag runs', () => {
  const texts = [
    'Lovely morning at the harbour with the dog',
    '@user The BrightBrew kombucha recall now covers every batch https://example.com/r #recall #kombucha',
    'BrightBrew statement coming later today',
  ];
  const d = describeNarrative('brightbrew, kombucha recall', texts);
  assert.is(d.label, 'BrightBrew, kombucha recall');
  assert.is(d.summary, 'The BrightBrew kombucha recall now covers every batch');
  assert.is(d.pick, 1);
  // Real tweets arrive with mojibake and HTML entities: the summary shows the text as written.
  assert.is(
    cleanForSummary('Migrants &amp; refugees in Zapre\u00c5\u00a1i\u00c4\u2021 ðŸ\u2018\u2030 #v4'),
    'Migrants & refugees in Zaprešić 👉',
  );
  // A retweet's marks go, and so do a last word and a tag run its platform cut.
  assert.is(
    cleanForSummary(
      'RT @PomyCaglieri: A nome di tutta la Sardegna vi ringrazio di cuore per tutto quello che state facendo, siete meravigliosi #allertam…',
    ),
    'A nome di tutta la Sardegna vi ringrazio di cuore per tutto quello che state facendo, siete meravigliosi',
  );
  assert.is(
    cleanForSummary(
      'Fifteen dead in north Italy quake: A new earthquake jolts the Emilia region in northern Italy, killing at least 15 p... http://t.co/x',
    ),
    'Fifteen dead in north Italy quake: A new earthquake jolts the Emilia region in northern Italy, killing at least 15…',
  );
  assert.is(cleanForSummary('Short and sweet...'), 'Short and sweet...', 'a short text was not cut');
});

test("describing from each post's words gives the label and summary of the texts themselves (the sample's posts, real tweets)", () => {
  const sample = fs
    .readFileSync(path.join(ROOT, 'fixtures', 'sample', 'posts', 'posts-00001.ndjson'), 'utf8')
    .split('\n')
    .flatMap((l) => {
      try {
        const r = JSON.parse(l) as { title?: unknown; description?: unknown };
        return [[r.title, r.description].filter((x) => typeof x === 'string').join('. ')];
      } catch {
        return [];
      }
    });
  // Real tweets too, where the data is beside the project (CI's fresh clone has none).
  const irony = path.join(TWEETEVAL_DIR, 'corpus', 'irony-train_text.txt');
  const tweets = fs.existsSync(irony) ? fs.readFileSync(irony, 'utf8').split('\n') : [];
  let compared = 0;
  for (const texts of [sample, tweets]) {
    for (let at = 0; at + 20 <= Math.min(texts.length, 4000); at += 4) {
      const group = texts.slice(at, at + 20);
      const counts = new ClassCounts(1);
      for (const t of group) counts.add(0, labelKeys(terms(t)));
      const label = labelFrom(counts.top(0, 12), 3);
      if (!label) continue;
      // The formula of the texts themselves: surface forms, and the summary post (the readable one
      // whose cleaned text holds most of the label's words, the first of equals), each read from the texts.
      const shown = showLabel(label, surfaceForms(group));
      const want = new Set(label.split(/[, ]+/));
      const hits = group.map((t) => new Set(terms(cleanForSummary(t)).filter((w) => want.has(w))).size);
      const pick =
        group
          .map((_, i) => i)
          .sort((a, b) => hits[b]! - hits[a]! || a - b)
          .find((i) => cleanForSummary(group[i]!) !== '' && readable(group[i]!)) ?? -1;
      const expected = { label: shown, summary: summarise(pick >= 0 ? cleanForSummary(group[pick]!) : shown), pick };
      assert.equal(describeNarrative(label, group), expected, `${label}: ${group[0]}`);
      // The same from words taken out of one analysis of each text (its terms and surfaces), as an answer takes them.
      const fromOnePass = group.map((t) => {
        const one = termsAndSurfaces(t);
        return postWords(t, one.surfaces, one.terms);
      });
      assert.equal(
        describeFromWords(label, fromOnePass, (i) => group[i]!),
        expected,
        `one pass: ${label}: ${group[0]}`,
      );
      compared++;
    }
  }
  assert.ok(compared > 100, `${compared} groups compared`);
});

test.run();
