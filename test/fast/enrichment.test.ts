// Per-post text enrichment: tone, emotion, brands, themes, neighbour scores, coverage, and a
// quality floor on the real TweetEval val data (well below the measured figures in bench/RESULTS.md).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { terms } from '../../core/text/analyzer.ts';
import {
  attributeConfidence,
  brandProducts,
  compileBrands,
  DEFAULT_BRANDS,
  EMOTION_LABELS,
  emotionMood,
  enrichText,
  idfFromDocumentFrequency,
  loadBrandDictionary,
  noveltyScore,
  saturationScore,
  postKeywords,
  tone,
  TONE_LABELS,
} from '../../core/enrichment/enrich-text.ts';
import { hasTweetEval } from '../../fixtures/tweeteval.ts';
import { measureTextQuality } from '../../tools/enrichment-models/quality.ts';

test('tone: clear positive, negative and neutral posts', () => {
  assert.is(tone('I love this, it is amazing!').tone, 'positive');
  assert.is(tone('This is terrible, I hate it').tone, 'negative');
  assert.is(tone('The meeting is at 3pm on Tuesday').tone, 'neutral');
  assert.is(tone('so sad, I miss him').tone, 'negative');
});

test('tone: negation, including shouted and curly-apostrophe negation', () => {
  assert.is(tone('I love it').tone, 'positive');
  assert.is(tone('I do not love it').tone, 'negative');
  assert.is(tone('This is not good at all').tone, 'negative');
  assert.is(tone('I am NOT happy').tone, 'negative');
  assert.is(tone('I don’t like it').tone, 'negative');
  assert.ok(tone('I am happy').compound > 0 && tone('I am not happy').compound < 0);
});

test('tone: emoji carry sentiment; URLs and @mentions alone are no evidence', () => {
  assert.is(tone('😍😍').tone, 'positive');
  assert.is(tone('the show tonight 😍🔥').tone, 'positive');
  assert.is(tone('💔😢').tone, 'negative');
  assert.is(tone('ugh 😡').tone, 'negative');
  assert.is(tone('the show tonight 👍🏽').tone, 'positive', 'skin-tone modifier');
  const none = tone('@user https://t.co/abc');
  assert.is(none.evidence, false);
  assert.is(none.toneConfidence, 0);
});

test('tone: non-English posts read only emoji, at half confidence', () => {
  const es = tone('la comida es terrible', 'es');
  assert.is(es.evidence, false);
  const esEmoji = tone('la comida 😍', 'es');
  assert.is(esEmoji.tone, 'positive');
  assert.ok(esEmoji.toneConfidence <= 0.5);
  assert.ok(tone('la comida 😍', 'en').toneConfidence > esEmoji.toneConfidence);
});

test('tone and emotion: confidences in 0..1, labels from the vocabularies, 0-2 moods (property)', () => {
  fc.assert(
    fc.property(
      fc.oneof(fc.string({ maxLength: 80 }), fc.constantFrom('I LOVE it!!! 😍', 'worst day ever 😡', 'not bad', '', '   ')),
      fc.constantFrom(undefined, null, 'en', 'es', 'de'),
      (text, lang) => {
        const t = tone(text, lang);
        assert.ok(TONE_LABELS.includes(t.tone));
        assert.ok(t.toneConfidence >= 0 && t.toneConfidence <= 1);
        assert.ok(t.compound >= -1 && t.compound <= 1);
        const e = emotionMood(text, lang);
        assert.ok(e.moods.length <= 2 && new Set(e.moods).size === e.moods.length);
        assert.ok(e.moods.every((m) => (EMOTION_LABELS as readonly string[]).includes(m)));
        assert.ok(e.confidence >= 0 && e.confidence <= 1);
        if (e.moods.length === 0) assert.is(e.confidence, 0);
      },
    ),
    { numRuns: 300 },
  );
  // a decided English post: posterior of the winning class, at least 1/3
  const c = tone('Great game tonight!').toneConfidence;
  assert.ok(c >= 1 / 3 && c <= 1);
});

test('emotionMood: the vocabulary includes anger, joy, optimism, sadness; clear cases', () => {
  for (const l of ['anger', 'joy', 'optimism', 'sadness']) assert.ok((EMOTION_LABELS as readonly string[]).includes(l));
  assert.is(emotionMood('This makes me furious, absolutely outrageous').moods[0], 'anger');
  assert.is(emotionMood('I am so happy today, what a laugh!').moods[0], 'joy');
  assert.is(emotionMood('I miss her so much, crying all night').moods[0], 'sadness');
  assert.equal(emotionMood(''), { moods: [], confidence: 0 });
  assert.equal(emotionMood('qwzx vbnmq'), { moods: [], confidence: 0 }, 'no known term: no mood');
});

test('brands: multi-word, case- and diacritic-insensitive, whole words, longest match, hashtags and mentions', () => {
  const d = loadBrandDictionary();
  assert.equal(brandProducts('Just got the new iPhone and AirPods Pro!', d), ['iPhone', 'Apple', 'AirPods']);
  assert.equal(brandProducts('LOUIS VUITTON bag and a louis vuitton belt', d), ['Louis Vuitton']);
  assert.equal(brandProducts('NESTLÉ, nestle and Nestlé', d), ['Nestlé']);
  assert.equal(brandProducts('dinner at applebees tonight', d), [], 'Applebee is not Apple');
  assert.equal(brandProducts('Drove the Tesla Model 3 today', d), ['Model 3', 'Tesla'], 'longest alias first, then its brand');
  assert.equal(brandProducts('#CocaCola or pepsi? ask @Tesla', d), ['Coca-Cola', 'Pepsi', 'Tesla']);
  assert.equal(brandProducts('', d), []);
  assert.equal(brandProducts(null, d), []);
  assert.is(d.unmatchable.length <= 1, true, `unmatchable default aliases: ${d.unmatchable.join(', ')}`);
});

test('brands: a dictionary from a file, or a plain list; bad files are clear errors', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'brands-'));
  try {
    const file = path.join(dir, 'brands.json');
    fs.writeFileSync(
      file,
      JSON.stringify([
        { name: 'Solstice Fest', aliases: ['SolsticeFest', 'Solstice Festival'] },
        { name: 'Café Zoë' },
        { name: 'Orbit X2', brand: 'Orbit' },
      ]),
    );
    const d = loadBrandDictionary(file);
    assert.equal(brandProducts('Tickets for solstice festival are out! #SolsticeFest', d), ['Solstice Fest']);
    assert.equal(brandProducts('coffee at CAFE ZOE', d), ['Café Zoë']);
    assert.equal(brandProducts('my orbit x2 arrived', d), ['Orbit X2', 'Orbit']);
    assert.equal(brandProducts('the orbit of the moon', d), [], 'a partial multi-word alias does not match');
    assert.equal(brandProducts('iPhone', d), [], 'a file replaces the default list');
    assert.equal(brandProducts('I love Acme Rockets', [{ name: 'Acme Rockets' }]), ['Acme Rockets']);
    fs.writeFileSync(file, JSON.stringify({ name: 'x' }));
    assert.throws(() => loadBrandDictionary(file), /JSON list/);
    fs.writeFileSync(file, JSON.stringify([{ aliases: ['x'] }]));
    assert.throws(() => loadBrandDictionary(file), /"name"/);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
  assert.equal(compileBrands([{ name: 'The' }]).unmatchable, ['The']);
});

test('themes: tf x idf, skipping numbers, single characters and emoji', () => {
  const idf = (t: string) => (({ battery: 3, recall: 4, owner: 1, ev: 2 }) as Record<string, number>)[t] ?? 0.5;
  const t = terms('EV battery recall: battery battery owners report 2024 x 😡 recall');
  assert.equal(postKeywords(t, idf, 2), ['battery', 'recall'], 'battery 3x3 = 9 > recall 2x4 = 8');
  assert.equal(postKeywords(t, idf), ['battery', 'recall', 'ev']);
  assert.ok(!postKeywords(t, () => 1, 10).some((x) => /^\d+$/.test(x) || [...x].length < 2 || x === '😡'));
  assert.equal(postKeywords([], idf), []);
  assert.equal(postKeywords(t, idf, 0), []);
  const fromDf = idfFromDocumentFrequency((x) => (x === 'common' ? 900 : 3), 1000);
  assert.equal(postKeywords(['common', 'common', 'rare'], fromDf, 1), ['rare']);
  assert.ok(fromDf('common') > 0 && fromDf('rare') > fromDf('common'));
});

test('scores: novelty, saturation and attribute confidence formulas and ranges', () => {
  assert.is(noveltyScore([]), 1);
  assert.ok(Math.abs(noveltyScore([0.2, 0.75, 0.5]) - 0.25) < 1e-12);
  assert.is(noveltyScore([1]), 0);
  assert.is(noveltyScore([-0.3]), 1, 'dissimilar neighbours leave full novelty');
  assert.is(saturationScore([]), 0);
  assert.is(saturationScore([0.97, 0.95, 0.91, 0.2]), 0.5, 'at the default 0.95, 0.91 is no near-duplicate');
  assert.is(saturationScore([0.95, 0.91, 0.5, 0.2], 0.93), 0.25);
  assert.is(attributeConfidence({}), null);
  assert.is(attributeConfidence({ emotion: null, brands: undefined }), null);
  assert.ok(Math.abs(attributeConfidence({ emotion: 0.6, brands: 0.9 })! - 0.75) < 1e-12);
  assert.ok(Math.abs(attributeConfidence([0.6, { confidence: 0.9, weight: 3 }])! - 0.825) < 1e-12);
  fc.assert(
    fc.property(
      fc.array(fc.double({ min: -1, max: 1, noNaN: true }), { maxLength: 20 }),
      fc.double({ min: 0, max: 1, noNaN: true }),
      (s, th) => {
        const n = noveltyScore(s),
          sat = saturationScore(s, th);
        assert.ok(n >= 0 && n <= 1 && sat >= 0 && sat <= 1);
      },
    ),
  );
  fc.assert(
    fc.property(fc.array(fc.oneof(fc.double({ min: -2, max: 2, noNaN: true }), fc.constant(null))), (parts) => {
      const c = attributeConfidence(parts);
      assert.ok(c === null || (c >= 0 && c <= 1));
    }),
  );
});

test('enrichText: every text field; coverage false where nothing was computed', () => {
  const e = enrichText('Just got the new iPhone 😍 so happy #blessed', 'en');
  assert.is(e.tone, 'positive');
  assert.ok(e.toneConfidence! > 0.5 && e.toneConfidence! <= 1);
  assert.ok(e.emotionMood.length >= 1 && e.emotionMood[0] === 'joy');
  assert.equal(e.brandProducts, ['iPhone', 'Apple']);
  assert.ok(e.themes.length === 3);
  assert.ok(e.attributeConfidence! > 0 && e.attributeConfidence! <= 1);
  assert.equal(e.coverage, { sentiment: true, attributes: true });
  const empty = {
    tone: null,
    toneConfidence: null,
    emotionMood: [],
    brandProducts: [],
    themes: [],
    attributeConfidence: null,
    attributeParts: { emotion: null, brands: null },
    coverage: { sentiment: false, attributes: false },
  };
  assert.equal(enrichText('', 'en'), empty);
  assert.equal(enrichText(null, null), empty);
  assert.equal(enrichText('   ', 'en'), empty);
  assert.equal(enrichText('https://t.co/abc @user', 'en'), empty);
  const es = enrichText('la comida es terrible', 'es');
  assert.is(es.tone, null, 'non-English words are not read by the English lexicon');
  assert.equal(es.coverage, { sentiment: false, attributes: true });
  assert.equal(es.emotionMood, []);
  const neutral = enrichText('The meeting is at 3pm on Tuesday', 'en');
  assert.is(neutral.tone, 'neutral');
  assert.equal(neutral.emotionMood, [], 'a neutral post with an unsure emotion gets no mood');
  assert.equal(enrichText('EV battery recall', 'en', { idf: (t) => (t === 'recall' ? 5 : 1), themeCount: 1 }).themes, ['recall']);
});

if (hasTweetEval()) {
  test('quality floor on TweetEval val (measured: tone macro-recall ~0.62, emotion accuracy ~0.73)', () => {
    const q = measureTextQuality(undefined, false);
    assert.ok(q.tone.shippedInSample.macroRecall >= 0.56, `tone macro-recall ${q.tone.shippedInSample.macroRecall}`);
    assert.ok(q.tone.shippedInSample.macroRecall > q.tone.majority.macroRecall + 0.2);
    for (const l of TONE_LABELS) assert.ok(q.tone.shippedInSample.perClassRecall[l]! >= 0.35, `${l} recall`);
    assert.ok(q.emotion.emotionMood.accuracy >= 0.65, `emotion accuracy ${q.emotion.emotionMood.accuracy}`);
    assert.ok(q.emotion.emotionMood.accuracy > q.emotion.majority.accuracy + 0.2);
    assert.ok(q.emotion.moodRateOnSentimentVal.neutralLabelled < q.emotion.moodRateOnSentimentVal.polarLabelled);
  });
} else {
  test.skip('quality floor on TweetEval val (data not found; set TWEETEVAL_DIR)', () => {});
}

test('folding diacritics never turns a word into a brand', () => {
  assert.equal(brandProducts('Ich fahre über die Brücke', DEFAULT_BRANDS), []);
  assert.equal(brandProducts('took an Uber home', DEFAULT_BRANDS), ['Uber']);
});

test.run();
