// The shared text analyzer on the cases social text throws at it.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { analyze, terms, termSurfaces } from '../../core/text/analyzer.ts';
import { repairText } from '../../core/text/text-repair.ts';

test('hashtags index as the tag and its camel-case parts; mentions and urls are recognised, not indexed', () => {
  const a = analyze('Huge news: #LineupLeak from @SolsticeFest https://t.co/abc123 check www.example.com now');
  assert.equal(a.hashtags, ['lineupleak']);
  assert.equal(a.mentions, ['solsticefest']);
  assert.equal(a.urls, ['https://t.co/abc123', 'www.example.com']);
  assert.ok(a.terms.includes('lineupleak') && a.terms.includes('lineup') && a.terms.includes('leak'));
  assert.not.ok(a.terms.some((t) => t.includes('solstice') || t.includes('t.co') || t.includes('example')));
});

test('each mark is recognised whatever its case or the text around it (the analyzer skips a pattern only where its mark cannot be)', () => {
  const a = analyze('READ HTTPS://EXAMPLE.ORG/Story and Www.Example.Net/x, mail me@home.net, ping @Ann_B © 👍🏽');
  assert.equal(a.urls, ['HTTPS://EXAMPLE.ORG/Story', 'Www.Example.Net/x,']);
  assert.equal(a.mentions, ['ann_b']);
  assert.equal(a.emoji, ['©', '👍🏽']);
  assert.equal(a.terms, ['©', '👍🏽', 'read', 'mail', 'home', 'net', 'ping']); // emoji are taken out of the text first
  // Each mark alone in its text.
  assert.equal(analyze('see Www.Example.Net/x now').urls, ['Www.Example.Net/x']);
  assert.equal(analyze('see hTTp://a.b/c now').urls, ['hTTp://a.b/c']);
  assert.equal(analyze('hi @Bo').mentions, ['bo']);
  assert.equal(analyze('ok ©').emoji, ['©']);
  // Plain ASCII with none of the marks: words only.
  assert.equal(analyze('Plain words, no marks at all: 42 days').terms, ['plain', 'word', 'mark', '42', 'day']);
  assert.equal(analyze('#Tag1 first#not').hashtags, ['tag1']);
});

test('Unicode: NFKC, case and diacritics folded, emoji kept as terms', () => {
  assert.equal(terms('Café CAFE café ＦＵＬＬＷＩＤＴＨ'), ['cafe', 'cafe', 'cafe', 'fullwidth']);
  const a = analyze('love it 😍🔥 👍🏽');
  assert.equal(a.emoji, ['😍', '🔥', '👍🏽']);
  assert.ok(a.terms.includes('😍') && a.terms.includes('love'));
});

test('damaged text is repaired before tokenising: mojibake (UTF-8 read as Windows-1252) and HTML entities', () => {
  // Lines as they occur in the TweetEval corpus: emoji and letters whose UTF-8 bytes were read as cp1252.
  assert.is(repairText('Croatia ðŸ‡­ðŸ‡·:  near ZapreÅ¡iÄ‡.'), 'Croatia 🇭🇷:  near Zaprešić.');
  assert.is(repairText('â€œquotedâ€\u009d'), '“quoted”');
  assert.is(repairText('Stripes &amp; Denim &lt;b&gt; &#39;x&#x41;'), "Stripes & Denim <b> 'xA");
  // Real Latin-1 letters are not a UTF-8 sequence and stay; an unknown entity stays.
  assert.is(repairText('café niño señor &copy;'), 'café niño señor &copy;');
  const a = analyze('Migrants ðŸ\u2018\u2030 Europe ðŸ‡ºðŸ‡¸');
  assert.equal(a.terms, ['👉', 'migrant', 'europe']);
  assert.equal(termSurfaces('Zapre\u00c5\u00a1i\u00c4\u2021 &amp; Split'), [
    ['zapresic', 'Zaprešić'],
    ['split', 'Split'],
  ]);
});

test('stop words by language, all supported languages when unknown; plural fold', () => {
  assert.equal(terms('The phones are in the boxes'), ['phone', 'boxe']);
  assert.equal(terms('la batería del coche eléctrico', 'es'), ['bateria', 'coche', 'electrico']);
  assert.equal(terms('die Batterie ist leer', 'de'), ['batterie', 'leer']);
  assert.equal(terms('RT via @user: lol ok'), ['ok']);
  // A final s that is not a plural stays: "news" must not become the far commoner "new".
  assert.equal(terms('breaking news series politics'), ['breaking', 'news', 'series', 'politics']);
  assert.equal(terms('new cities'), ['new', 'city']);
});

test('queries and documents analyse identically; empty input is no terms', () => {
  assert.equal(terms('EV Battery RECALL: owners report swelling packs'), terms('ev battery recall owners report swelling packs'));
  assert.equal(terms(''), []);
  assert.equal(terms(null), []);
});

test.run();
