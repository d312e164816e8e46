// Labels and summaries a reader trusts (docs/fields.md, "label", "summary",
// "representative_content_uuid"): the abuse lexicon, the readability rule, the language of a text,
// and how a cluster of rows is described from its members (core/maps/cluster-describer.ts): never
// an abusive or mostly-mentions post as its summary and representative, no stop word of its posts'
// language in its label, every label word as its posts wrote it. Real strings, real analysis.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { terms } from '../../core/text/analyzer.ts';
import { cleanForSummary, postWords } from '../../core/maps/label-and-summary.ts';
import { describeClusters, DESCRIBE_DEEPER, LABEL_CANDIDATES, type ClusterToDescribe } from '../../core/maps/cluster-describer.ts';
import { DESCRIBE_POSTS } from '../../core/maps/label-and-summary.ts';
import { ClassCounts, labelFrom, labelKeys } from '../../core/maps/labels.ts';
import { isAbusive } from '../../core/text/abuse.ts';
import { languagesOf, textLanguage } from '../../core/text/language.ts';
import { unreadable } from '../../core/text/readable.ts';

test('the abuse lexicon: spellings that dodge a word list are flagged, innocent words and numbers are not', () => {
  for (const t of [
    'f*ck this',
    'fuuuuck off',
    'sh1t happens',
    'what the fck',
    'you stupid bitch',
    'que puta mierda',
    'che cazzo',
    '#FuckThis',
  ])
    assert.ok(isAbusive(t), t);
  for (const t of [
    'Scunthorpe United won',
    'a hoedown and a new garden shoe',
    'shiitake mushrooms',
    'a cumulative rainfall record',
    'feliz cumpleaños',
    'humo negro sobre la ciudad',
    'call 0544 455902 for a room',
    '@arsenal won again',
    'rape survivors march on parliament',
    'class assessment',
    'Analisi uso twitter durante il terremoto',
  ])
    assert.not.ok(isAbusive(t), t);
});

test('readability: the reason a post cannot stand for a cluster', () => {
  assert.is(unreadable('The ferry strike ends tonight after the union vote'), null);
  assert.is(unreadable('The ferry strike is a load of shit, the union should be ashamed'), 'abusive');
  assert.is(unreadable('@a @b @c @d ferry strike https://x.co/1'), 'mentions-links');
  assert.is(unreadable('RT @a: @b @c https://x.co/1 ferry'), 'mentions-links');
  assert.is(unreadable('#iWokeUpLikeThis #NoMakeup #NoFilter #NoExcuses ! #GetItIn hello there'), 'hashtags');
  assert.is(unreadable('So true'), 'few-words');
  assert.is(unreadable('AMANHÃ NO CALÇADÃO HAVERÁ UMA CAMINHADA EM SOLIDARIEDADE AOS JOVENS'), 'shouting');
  assert.is(unreadable('The NRA said the ferry union vote was rigged'), null, 'an acronym is no shouting');
});

test('the language of a text from its function words; a cluster has the languages of a tenth of its texts', () => {
  assert.is(textLanguage('Alluvione in Sardegna, non si sa ancora quanti sono i morti e che cosa si poteva fare di più'), 'it');
  assert.is(textLanguage('The ferry strike ends tonight after the union vote, and the boats run again from the morning'), 'en');
  assert.is(textLanguage('Costa Rica'), null, 'no function word');
  // 20 texts: two Italian ones are a tenth; one Dutch one is not.
  const twenty = ['it', 'it', 'nl', null, ...Array<string>(16).fill('en')];
  assert.equal([...languagesOf(twenty)].sort(), ['en', 'it']);
});

/**
 * The described clusters of texts: each cluster's rows are its texts' indexes (most central first),
 * labels from their c-TF-IDF keys; `interactions[row]` each row's (none: 0).
 */
async function describe(groups: string[][], interactions: number[] = []) {
  const texts: string[] = groups.flat();
  const counts = new ClassCounts(groups.length);
  let row = 0;
  const memberRows = groups.map((g, c) =>
    g.map(() => {
      counts.add(c, labelKeys(terms(texts[row])));
      return row++;
    }),
  );
  // top() weighs a key against every class, so the candidates are taken once all are counted.
  const clusters: ClusterToDescribe[] = memberRows.map((members, c) => ({
    members,
    candidates: counts.top(c, LABEL_CANDIDATES),
    tags: [],
  }));
  const reads: number[][] = [];
  const out = await describeClusters(
    clusters,
    { shared: counts.sharedKeys(), termsOf: (r) => terms(texts[r]), interactions: texts.map((_, r) => interactions[r] ?? 0) },
    async (rows) => (reads.push(rows), new Map(rows.map((r) => [r, texts[r]!]))),
    (t) => postWords(t),
  );
  return { out, reads, texts, counts };
}

const FERRY = (i: number) => `Ferry strike day ${i}: the ferry union says the strike goes on and crossings stay cancelled`;
const OTHER = (i: number) => `The kombucha recall widens to batch ${i} as the BrightBrew plant shuts for cleaning`;

test('an abusive post is never the summary or the representative, even the most central one that says all the label', async () => {
  const abusive = 'Fuck this ferry strike, the ferry union can shove its strike up its ass';
  const { out, texts } = await describe([
    [abusive, ...Array.from({ length: 9 }, (_, i) => FERRY(i))],
    Array.from({ length: 10 }, (_, i) => OTHER(i)),
  ]);
  const ferry = out[0]!;
  assert.match(ferry.label, /ferry/);
  assert.is.not(ferry.representative, 0, 'not the abusive post');
  assert.is(ferry.representative, 1, 'the most central readable post');
  assert.is(ferry.summary, cleanForSummary(texts[1]!));
  assert.not.ok(isAbusive(ferry.summary));
});

test('of posts that say the label alike, the more engaged stands for the cluster, then the more central', async () => {
  const groups = [Array.from({ length: 10 }, (_, i) => FERRY(i)), Array.from({ length: 10 }, (_, i) => OTHER(i))];
  assert.is((await describe(groups)).out[0]!.representative, 0, 'no engagement: the most central');
  const engaged = Array<number>(20).fill(1);
  engaged[6] = 40;
  assert.is((await describe(groups, engaged)).out[0]!.representative, 6, 'the most engaged');
  // A post saying fewer of the label's words is not chosen for its engagement.
  const fewer = [['Crossings stay cancelled again today, the island waits for news', ...groups[0]!.slice(1)], groups[1]!];
  engaged[0] = 500;
  assert.is((await describe(fewer, engaged)).out[0]!.representative, 6);
});

test('a post that is mostly mentions or links is skipped', async () => {
  const { out } = await describe([
    ['@ferryco @union @mayor ferry strike https://t.co/a https://t.co/b', ...Array.from({ length: 9 }, (_, i) => FERRY(i))],
    Array.from({ length: 10 }, (_, i) => OTHER(i)),
  ]);
  assert.is(out[0]!.representative, 1);
});

test('none of the most central posts readable: the first readable one further down; none at all: no representative, the label', async () => {
  const shouting = (i: number) => `FERRY STRIKE DAY ${i} AND THE FERRY UNION WILL NOT MOVE AN INCH`;
  const deep = [...Array.from({ length: DESCRIBE_POSTS + 5 }, (_, i) => shouting(i)), FERRY(1), FERRY(2)];
  const { out, reads } = await describe([deep, Array.from({ length: 10 }, (_, i) => OTHER(i))]);
  assert.is(out[0]!.representative, DESCRIBE_POSTS + 5, 'the first readable member past the central ones');
  assert.ok(reads[1]!.includes(DESCRIBE_POSTS + 5) && !reads[0]!.includes(DESCRIBE_POSTS + 5), 'read in the second round');
  const none = await describe([Array.from({ length: 12 }, (_, i) => shouting(i)), Array.from({ length: 10 }, (_, i) => OTHER(i))]);
  assert.is(none.out[0]!.representative, null);
  assert.is(none.out[0]!.summary, none.out[0]!.label);
  assert.ok(DESCRIBE_DEEPER >= 100);
});

test("an Italian cluster's label has no Italian stop word; an abusive word never names a cluster", async () => {
  const italian = [
    'Alluvione in Sardegna, il bilancio dei morti sale ancora e la Protezione civile chiede di non uscire di casa',
    'La Sardegna è in ginocchio dopo il ciclone, che ha colpito Olbia e le campagne di tutta la Gallura',
    "Alluvione Sardegna, che cosa si poteva fare di più? La polemica sull'allerta meteo",
    'Olbia sott’acqua: di nuovo pioggia sulla Sardegna, che conta i danni del ciclone',
    'Ciclone Cleopatra, alluvione in Sardegna: la conta dei danni di Olbia e delle campagne',
    'Che disastro in Sardegna, di nuovo allerta meteo per la notte: alluvione e frane in Gallura',
  ];
  const groups = [italian, Array.from({ length: 6 }, (_, i) => OTHER(i)), Array.from({ length: 6 }, (_, i) => FERRY(i))];
  const { out, counts } = await describe(groups);
  const words = out[0]!.label.toLowerCase().split(/[, ]+/);
  for (const stop of ['di', 'che', 'la', 'il', 'in']) assert.not.ok(words.includes(stop), `${stop} in "${out[0]!.label}"`);
  assert.ok(words.includes('sardegna'), out[0]!.label);
  // Without the language's stop words the same keys name it "di" or "che": the skip is what keeps them out.
  assert.match(labelFrom(counts.top(0, LABEL_CANDIDATES), 3, counts.sharedKeys()), /\b(di|che)\b/);
  const rude = [
    'Fuck the ferry strike, the ferry union is a joke and the crossings stay shut',
    'Another fucking ferry strike and the crossings shut again for the week',
    'The ferry strike: fuck the union, the crossings are shut and nobody cares',
    'Ferry strike again, fuck it, the crossings stay shut until the union says so',
  ];
  const r = await describe([rude, Array.from({ length: 6 }, (_, i) => OTHER(i)), italian]);
  assert.not.ok(/fuck/i.test(r.out[0]!.label), r.out[0]!.label);
  assert.match(r.out[0]!.label, /ferry/);
});

test('a label word the plural fold clipped shows as its posts wrote it, read from members beyond the central ones', async () => {
  // The central posts never write the word; members further down do, as "Vegas": the label says "vegas", not the fold's "vega".
  const central = Array.from({ length: DESCRIBE_POSTS }, (_, i) => `Night ${i} of the shooting coverage and the vigil on the strip`);
  const deeper = Array.from({ length: 6 }, (_, i) => `Las Vegas shooting: vigil number ${i} on the strip tonight`);
  const groups = [[...central, ...deeper], Array.from({ length: 10 }, (_, i) => OTHER(i))];
  const texts = groups.flat();
  const out = await describeClusters(
    [
      { members: groups[0]!.map((_, i) => i), candidates: [{ key: 'vega' }, { key: 'vigil' }], tags: [] },
      { members: groups[1]!.map((_, i) => groups[0]!.length + i), candidates: [{ key: 'kombucha' }], tags: [] },
    ],
    { shared: new Set(), termsOf: (r) => terms(texts[r]), interactions: texts.map(() => 0) },
    async (rows) => new Map(rows.map((r) => [r, texts[r]!])),
    (t) => postWords(t),
  );
  assert.ok(terms('Las Vegas').includes('vega'), 'the analysed term is the fold');
  assert.is(out[0]!.label, 'vegas, vigil');
});

test.run();
