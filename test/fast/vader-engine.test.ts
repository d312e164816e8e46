// The VADER engine (the package's own scorer with a faster tokenizer) must score exactly as the
// package's published bundle: on the committed sample's posts, on TweetEval when it is beside the
// repository (a visible skip when it is not), and on random punctuation-heavy text.
import fs from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import vader from 'vader-sentiment';
import { postText } from '../../pipeline/features/text-analysis.ts';
import { polarityScores } from '../../core/enrichment/vader-engine.ts';
import { prepareForVader } from '../../core/enrichment/vader.ts';
import { hasTweetEval, loadSplit } from '../../fixtures/tweeteval.ts';
import { ROOT } from '../helpers/child.ts';

const bundle = (s: string) => vader.SentimentIntensityAnalyzer.polarity_scores(s);

function samplePosts(): string[] {
  const dir = path.join(ROOT, 'fixtures', 'sample', 'posts');
  const out: string[] = [];
  for (const f of fs.readdirSync(dir).filter((n) => n.endsWith('.ndjson'))) {
    for (const line of fs.readFileSync(path.join(dir, f), 'utf8').split('\n')) {
      try {
        const r = JSON.parse(line) as { title?: string; description?: string; tags?: string[] };
        out.push(postText({ title: r.title ?? null, description: r.description ?? null, tags: r.tags ?? [] }));
      } catch {
        /* the sample plants unparsable lines on purpose */
      }
    }
  }
  return out;
}

test('same scores as the package on the sample posts, raw and prepared', () => {
  const posts = samplePosts();
  assert.ok(posts.length > 500);
  for (const p of posts) {
    assert.equal(polarityScores(p), bundle(p), p);
    const prepared = prepareForVader(p);
    assert.equal(polarityScores(prepared), bundle(prepared), prepared);
  }
});

if (hasTweetEval()) {
  test('same scores as the package on TweetEval sentiment/val', () => {
    const { texts } = loadSplit('sentiment', 'val');
    assert.ok(texts.length > 1000, `${texts.length} tweets`);
    for (const t of texts) assert.equal(polarityScores(t), bundle(t), t);
  });
} else {
  test.skip('same scores as the package on TweetEval sentiment/val (data not found; set TWEETEVAL_DIR)', () => {});
}

test('same scores as the package on random punctuation-heavy text', () => {
  const piece = fc.constantFrom(
    'good',
    'bad',
    'not',
    'very',
    'but',
    'kind',
    'of',
    'least',
    'GREAT',
    "don't",
    'lol',
    ':)',
    ':-(',
    '<3',
    '!',
    '!!',
    '?',
    '???',
    '?!?',
    '.',
    ',',
    '-',
    "'",
    '"',
    'at',
    'never',
    'so',
    'the',
    'cut the mustard',
    'xo',
    '...',
    '!?!?',
  );
  fc.assert(
    fc.property(fc.array(fc.tuple(piece, fc.constantFrom('', ' ', '  ', '\t')), { maxLength: 25 }), (parts) => {
      const text = parts.map(([a, b]) => a + b).join('');
      assert.equal(polarityScores(text), bundle(text), JSON.stringify(text));
    }),
    { numRuns: 3000, seed: 7 },
  );
});

test.run();
