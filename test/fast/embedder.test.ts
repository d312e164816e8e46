// The LSA embedder: deterministic, persisted exactly, and meaningful on the fixture corpus.
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { terms } from '../../core/text/analyzer.ts';
import {
  embed,
  embedderKnows,
  embedQuery,
  fitEmbedder,
  learntMinDocs,
  loadEmbedder,
  sampleIndices,
  saveEmbedder,
  termHashes,
  type EmbedderParams,
} from '../../core/vectors/embedder.ts';
import { foldInWords } from '../../core/vectors/fold-in.ts';
import { removeCommon } from '../../core/vectors/common-directions.ts';
import { FURNITURE_DEFAULTS, furnitureFeatures } from '../../core/vectors/furniture-terms.ts';
import { seededRandom } from '../../core/stats/seeded-random.ts';
import { ROOT } from '../helpers/child.ts';
import { cleanupTmp, tmpDir } from '../helpers/tmp.ts';

test.after.each(cleanupTmp);

const SAMPLE = path.join(ROOT, 'fixtures', 'sample');
const truth = new Map<string, string | null>();
for (const line of fs.readFileSync(path.join(SAMPLE, 'truth.ndjson'), 'utf8').split('\n')) {
  if (line.includes('"type":"post"')) {
    const r = JSON.parse(line);
    truth.set(r.uuid, r.narrative);
  }
}
const posts: Array<{ uuid: string; text: string; language: string }> = [];
for (const line of fs.readFileSync(path.join(SAMPLE, 'posts', 'posts-00001.ndjson'), 'utf8').split('\n')) {
  try {
    const r = JSON.parse(line);
    if (truth.has(r.uuid) && !posts.some((p) => p.uuid === r.uuid))
      posts.push({
        uuid: r.uuid,
        text: `${r.title ?? ''} ${r.description ?? ''} ${(r.tags ?? []).map((t: string) => `#${t}`).join(' ')}`,
        language: r.language,
      });
  } catch {
    // malformed lines are the planted bad records
  }
}
const docTerms = posts.map((p) => terms(p.text, p.language));
const docs = docTerms.map(termHashes);
const params: EmbedderParams = { buckets: 1 << 14, dim: 48, sample: 10_000, oversample: 12, powerIterations: 2, seed: 7 };

const cos = (a: Float32Array, b: Float32Array) => a.reduce((s, v, i) => s + v * b[i]!, 0);

test('fitting is deterministic: same corpus and seed, same model and version', () => {
  const a = fitEmbedder(docs, params);
  const b = fitEmbedder(docs, params);
  assert.is(a.version, b.version);
  assert.equal(Array.from(a.projection.subarray(0, 500)), Array.from(b.projection.subarray(0, 500)));
  assert.is.not(fitEmbedder(docs, { ...params, seed: 8 }).version, a.version);
});

test('saved and loaded, the model embeds byte-identically; queries embed exactly as documents', async () => {
  const m = fitEmbedder(docs, params);
  const file = path.join(tmpDir(), 'embedder.bin');
  await saveEmbedder(m, file);
  const back = await loadEmbedder(file);
  assert.is(back.version, m.version);
  for (const d of docTerms.slice(0, 50)) assert.equal(Array.from(embed(back, d)), Array.from(embed(m, d)));
  const v = embed(m, docTerms[3]!);
  assert.ok(Math.abs(cos(v, v) - 1) < 1e-5, 'unit length');
  assert.equal(Array.from(embed(m, [])), new Array(params.dim).fill(0));
});

test('posts of the same planted narrative are closer than posts of different narratives', () => {
  const m = fitEmbedder(docs, params);
  const vecs = docTerms.map((d) => embed(m, d));
  let same = 0,
    sameN = 0,
    diff = 0,
    diffN = 0;
  for (let i = 0; i < posts.length; i += 3) {
    for (let j = i + 1; j < posts.length; j += 5) {
      const ni = truth.get(posts[i]!.uuid),
        nj = truth.get(posts[j]!.uuid);
      if (!ni || !nj) continue;
      const c = cos(vecs[i]!, vecs[j]!);
      if (ni === nj) ((same += c), sameN++);
      else ((diff += c), diffN++);
    }
  }
  assert.ok(sameN > 50 && diffN > 500);
  const gap = same / sameN - diff / diffN;
  assert.ok(gap > 0.3, `mean cosine same narrative ${(same / sameN).toFixed(3)} vs different ${(diff / diffN).toFixed(3)}`);
});

test('the fit sample is consistent: a corpus grown by 1% keeps ~99% of it, and no empty document is picked', () => {
  // 20,000 documents from the sample's terms, each made distinct by a word of its own.
  const big = Array.from({ length: 20_000 }, (_, i) => termHashes([...docTerms[i % docTerms.length]!, `w${i}`]));
  const withEmpty = [...big.slice(0, 100), new Uint32Array(0), ...big.slice(100)];
  const a = sampleIndices(withEmpty, 2_000, 7);
  assert.is(a.length, 2_000);
  assert.not.ok(a.includes(100), 'the empty document is never picked');
  // 1% more documents appended: the earlier picks are mostly kept (a stride over rows keeps few).
  const grown = [...withEmpty, ...Array.from({ length: 200 }, (_, i) => termHashes([`new${i}`, 'post']))];
  const b = new Set(sampleIndices(grown, 2_000, 7));
  const kept = a.filter((i) => b.has(i)).length / a.length;
  assert.ok(kept >= 0.97, `kept ${kept}`);
  // Identical documents are told apart by their order: 5,000 copies of one text are sampled like
  // any other half of the corpus (with one key for all they would be all picked or none).
  const dupes = Array.from({ length: 5_000 }, () => termHashes(['same', 'text']));
  const picked = sampleIndices([...dupes, ...big.slice(0, 5_000)], 1_000, 7).filter((i) => i < 5_000).length;
  assert.ok(picked > 400 && picked < 600, `${picked} of 1,000 picks are copies`);
});

test('furniture: a feature every kind of post carries loses its weight, topic words keep theirs, and a fit less one post barely moves it', () => {
  // 12 topics of 60 posts, each post a unit vector near its topic's axis; features: 3 of its topic's
  // 10 words, the boilerplate feature 1 in every third post, feature 2 only in topics 0-5.
  const dim = 16;
  const random = seededRandom(5);
  const features: number[][] = [];
  const vecs: number[] = [];
  for (let t = 0; t < 12; t++)
    for (let i = 0; i < 60; i++) {
      const f = [100 + t * 10 + (i % 10), 100 + t * 10 + ((i + 3) % 10), 100 + t * 10 + ((i + 7) % 10)];
      if ((t * 60 + i) % 3 === 0) f.push(1);
      if (t < 6 && i % 2 === 0) f.push(2);
      features.push(f);
      const v = Array.from({ length: dim }, (_, j) => (j === t ? 1 : 0) + 0.15 * (random() - 0.5));
      const n = Math.hypot(...v);
      vecs.push(...v.map((x) => x / n));
    }
  const opts = { ...FURNITURE_DEFAULTS, seed: 42 };
  const weights = new Map(furnitureFeatures(features, Float32Array.from(vecs), dim, opts));
  assert.is(weights.get(1), 1, 'the boilerplate feature loses all its weight');
  assert.ok((weights.get(2) ?? 0) < 1, `a feature of half the topics keeps some weight (${weights.get(2)})`);
  for (const [f, w] of weights) assert.ok(f < 100 && w > 0 && w <= 1, `feature ${f}: weight ${w}`);
  // The same posts less one: every weight within a quarter of what it was.
  const less = new Map(furnitureFeatures(features.slice(1), Float32Array.from(vecs.slice(dim)), dim, opts));
  for (const f of new Set([...weights.keys(), ...less.keys()]))
    assert.ok(Math.abs((weights.get(f) ?? 0) - (less.get(f) ?? 0)) <= 0.25, `feature ${f}: ${weights.get(f)} vs ${less.get(f)}`);
});

// ---- the features the fit learnt, and words folded in after it (issue 37) ----

const FERRY = [
  'IslaLink ferry crews walk out at 6am, every crossing to the islands cancelled today.',
  'Stuck at the harbour, IslaLink says no sailings until the strike is over.',
  'IslaLink strike day two: the morning ferry never left and the queue of cars is huge.',
  'Union says IslaLink cut crew rest hours, that is why the ferries are not running.',
  'IslaLink offers refunds for cancelled crossings, apply on the website within 14 days.',
].map((t) => terms(t, 'en'));

test('a word the fit never saw embeds to nothing, and a post embeds as without it', () => {
  const m = fitEmbedder(docs, params);
  assert.ok(m.known !== null && m.known.length > 1000, `known features: ${m.known?.length}`);
  assert.equal(Array.from(embed(m, ['islalink'])), new Array(params.dim).fill(0), 'an unknown word alone is no vector');
  const known = docTerms.find((d) => d.length >= 6)!;
  // The word among known ones changes nothing: its bucket's vector is other words' meaning.
  assert.equal(Array.from(embed(m, [...known, 'islalink'])), Array.from(embed(m, known)));
  // Most words of three posts or more are known: the rest are furniture or lost their bucket to a commoner word.
  const df = new Map<string, number>();
  for (const d of docTerms) for (const t of new Set(d)) df.set(t, (df.get(t) ?? 0) + 1);
  const common = [...df].filter(([, n]) => n >= 3).map(([t]) => t);
  const share = common.filter((t) => embedderKnows(m, t)).length / common.length;
  assert.ok(share > 0.85, `known: ${share.toFixed(3)} of ${common.length} words in three posts or more`);
  // A large corpus takes a word as learnt from one post in a thousand (up to 20): rarer ones are folded in.
  assert.equal([500, 2_000, 7_400, 20_000, 40_000].map(learntMinDocs), [2, 2, 7, 20, 20]);
  assert.not.ok(embedderKnows(m, 'islalink'));
});

test('a new word folded in takes the direction of the posts that brought it', () => {
  const m = fitEmbedder(docs, params);
  const { model, folded } = foldInWords(m, FERRY.map(termHashes));
  assert.ok(folded >= 1, `folded ${folded}`);
  assert.ok(embedderKnows(model, 'islalink'));
  const q = embed(model, ['islalink']);
  const mean = new Float32Array(params.dim);
  for (const d of FERRY) embed(m, d).forEach((v, i) => (mean[i]! += v));
  const norm = Math.hypot(...mean);
  // The first pass gives it the mean of its posts; the second reads them with the first pass's new words too.
  const c = cos(
    q,
    mean.map((v) => v / norm),
  );
  assert.ok(c > 0.8 && c < 0.9999, `the word is near the mean of its posts (before it was folded): ${c.toFixed(4)}`);
  // A search for it leaves out the directions every post shares (embedQuery): orthogonal to each.
  const common = model.common!;
  assert.is(common.length, 3 * params.dim, 'the mean direction and 2 principal directions');
  const asked = embedQuery(model, ['islalink']);
  for (let k = 0; k < 3; k++)
    assert.ok(Math.abs(cos(asked, common.subarray(k * params.dim, (k + 1) * params.dim))) < 1e-4, `common direction ${k}`);
  const plain = Float64Array.from(q);
  removeCommon(plain, common);
  assert.ok(
    cos(
      asked,
      Float32Array.from(plain, (v) => v / Math.hypot(...plain)),
    ) > 0.9999,
    'the folded vector less its common part',
  );
  // Closer to its own posts than to any of the corpus's.
  const own = Math.min(...FERRY.map((d) => cos(q, embed(model, d))));
  const other = Math.max(...docTerms.map((d) => cos(q, embed(model, d))));
  assert.ok(own > other, `own posts at least ${own.toFixed(3)}, the corpus's at most ${other.toFixed(3)}`);
  // A word in one post only keeps no vector; a word folded once is not folded again.
  const once = foldInWords(model, [termHashes(terms('Hibernia ferries join the walkout', 'en'))]);
  assert.not.ok(embedderKnows(once.model, 'hibernia'), 'one post is too thin a context');
  assert.is(foldInWords(model, FERRY.map(termHashes)).folded, 0);
});

test('known features and folded words survive saving; a file of the earlier model still loads', async () => {
  const { model } = foldInWords(fitEmbedder(docs, params), FERRY.map(termHashes));
  const file = path.join(tmpDir(), 'embedder.bin');
  await saveEmbedder(model, file);
  const back = await loadEmbedder(file, { share: true });
  assert.equal(Array.from(back.known!), Array.from(model.known!));
  assert.equal(Array.from(back.folded.ids), Array.from(model.folded.ids));
  assert.equal(Array.from(embed(back, ['islalink', 'ferry'])), Array.from(embed(model, ['islalink', 'ferry'])));
  // The earlier layout: header without the lists, then idf and projection only.
  const header = Buffer.from(JSON.stringify({ params: model.params, version: 'old', documents: model.documents }));
  const len = Buffer.alloc(4);
  len.writeUInt32LE(header.length);
  const legacy = path.join(tmpDir(), 'legacy.bin');
  fs.writeFileSync(
    legacy,
    Buffer.concat([
      len,
      header,
      Buffer.from(model.idf.buffer, model.idf.byteOffset, model.idf.byteLength),
      Buffer.from(model.projection.buffer),
    ]),
  );
  const old = await loadEmbedder(legacy);
  assert.is(old.known, null);
  assert.ok(embedderKnows(old, 'islalink'), 'every bucket counts as known in a model saved before the list');
});

test.run();
