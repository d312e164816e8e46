// The search answer's c-TF-IDF labels over interned integer keys (core/maps/label-counts.ts) against
// the pipeline's string-keyed ClassCounts: the same keys, weights and order, ties included.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ClassCounts } from '../../core/maps/labels.ts';
import { KeyCounter, keyListsOf, LabelVocabulary } from '../../core/maps/label-counts.ts';

test('KeyCounter.top equals ClassCounts.top (keys, weights, order with ties) and leaves its scratch counts clean', () => {
  let seed = 5;
  const rand = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  // A small alphabet so that many keys tie on weight and on count.
  const words = Array.from({ length: 40 }, (_, i) => `w${i}`);
  const vocabulary = new LabelVocabulary();
  const counter = new KeyCounter();
  for (let trial = 0; trial < 30; trial++) {
    const k = 1 + Math.floor(rand() * 5);
    const classes = Array.from({ length: k }, () =>
      Array.from({ length: 1 + Math.floor(rand() * 12) }, () =>
        Array.from({ length: Math.floor(rand() * 9) }, () => words[Math.floor(rand() * (trial % 2 ? 8 : words.length))]!),
      ),
    );
    const reference = new ClassCounts(k);
    classes.forEach((rows, c) => rows.forEach((keys) => reference.add(c, keys)));
    for (const n of [1, 5, 12]) {
      const ids = keyListsOf(classes.map((rows) => rows.map((keys) => vocabulary.idsOf(keys))));
      const got = counter.top(ids.classes, ids.lists, vocabulary.keys.length, n, (id) => vocabulary.keys[id]!);
      for (let c = 0; c < k; c++) {
        assert.equal(
          got[c]!.map(({ key, weight }) => ({ key, weight })),
          reference.top(c, n),
          `trial ${trial}, n ${n}, class ${c}`,
        );
      }
    }
  }
});

test('LabelVocabulary interns each key once and reports when full', () => {
  const v = new LabelVocabulary(3);
  assert.equal(Array.from(v.idsOf(['a', 'b', 'a'])), [0, 1, 0]);
  assert.is(v.full, false);
  assert.equal(Array.from(v.idsOf(['c', 'b'])), [2, 1]);
  assert.is(v.full, true);
  v.clear();
  assert.equal(Array.from(v.idsOf(['c'])), [0]);
});

test.run();
