// BM25's fast loops (core/ranking/bm25.ts: one or two lists merged with their cursors in locals, three to
// nine merged with their cursors in typed arrays, ten or more term at a time with rows listed or a
// span scanned) return exactly the rows and scores of the general merge (the exhaustive reference): held equal on a Zipf-distributed corpus of long and
// short lists, across segments, windows, deleted rows, short and long queries, ties included.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { buildBm25FromTerms, searchBm25, searchSegments, segmentedBm25 } from '../../core/ranking/bm25.ts';
import { seededRandom } from '../../core/stats/seeded-random.ts';

const VOCAB = 5000;
const word = (i: number) => `w${i}`;

/** Documents of 3-30 terms, term ranks drawn from a Zipf law (s = 1): a few words in most documents, most words rare. */
function corpus(docs: number, seed: number): string[][] {
  const random = seededRandom(seed);
  const cdf = new Float64Array(VOCAB);
  let acc = 0;
  for (let r = 0; r < VOCAB; r++) cdf[r] = acc += 1 / (r + 1);
  const draw = () => {
    const x = random() * acc;
    let lo = 0;
    let hi = VOCAB - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (cdf[mid]! < x) lo = mid + 1;
      else hi = mid;
    }
    return word(lo);
  };
  return Array.from({ length: docs }, () => Array.from({ length: 3 + Math.floor(random() * 28) }, draw));
}

const segments = [corpus(120_000, 1), corpus(90_000, 2), corpus(60_000, 3)].map((docs) => buildBm25FromTerms(docs));
let first = 0;
const b = segmentedBm25(segments.map((index, i) => ({ id: `s${i}`, firstRow: (first += i ? segments[i - 1]!.docLen.length : 0), index })));
const rows = b.docs;

function queries(seed: number): string[][] {
  const random = seededRandom(seed);
  const rank = (top: number) => word(Math.floor(random() ** 2 * top));
  const out: string[][] = [];
  for (let i = 0; i < 60; i++) {
    const n = 1 + Math.floor(random() * 12);
    // Frequent words (long posting lists) mixed with rarer ones, as real queries mix them.
    out.push(Array.from({ length: n }, (_, j) => rank(j % 2 ? 50 : VOCAB)));
  }
  return out;
}

test('fast top k = exhaustive top k across segments, windows and deleted rows', () => {
  const random = seededRandom(7);
  const deleted = new Uint8Array(rows);
  for (let r = 0; r < rows; r++) if (random() < 0.01) deleted[r] = 1;
  let compared = 0;
  let found = 0;
  for (const q of queries(11)) {
    for (const start of [0, 100_000, 150_000, 250_000]) {
      for (const k of [10, 200]) {
        const expected = searchSegments(b, q, k, start, deleted, true);
        assert.equal(searchSegments(b, q, k, start, deleted), expected, `${q.join(' ')} from ${start}, k ${k}`);
        compared++;
        found += expected.length;
      }
    }
  }
  assert.ok(compared === 480 && found > 40_000, `${compared} searches, ${found} rows`);
});

test('one and two words (the merge with its cursors in locals): frequent words with many ties, a word twice, k beyond the matches', () => {
  const deleted = new Uint8Array(rows);
  for (let r = 0; r < rows; r += 97) deleted[r] = 1;
  const qs = [
    [word(0)],
    [word(1)],
    [word(7), word(3)],
    [word(2), word(40)],
    [word(4), word(4)],
    [word(4999)],
    [word(4998), word(0)],
    [word(3), 'nowhere'],
  ];
  let compared = 0;
  for (const q of qs) {
    for (const start of [0, 120_000, 200_000]) {
      for (const k of [1, 200, 100_000]) {
        const expected = searchSegments(b, q, k, start, deleted, true);
        assert.equal(searchSegments(b, q, k, start, deleted), expected, `${q.join(' ')} from ${start}, k ${k}`);
        compared += expected.length;
      }
    }
  }
  assert.ok(compared > 200_000, `${compared} rows compared`);
});

test('three to nine words (the merge with its cursors in typed arrays): rare and frequent words, repeated words, lists ending early', () => {
  const deleted = new Uint8Array(rows);
  for (let r = 0; r < rows; r += 89) deleted[r] = 1;
  let compared = 0;
  for (let n = 3; n <= 9; n++) {
    const qs = [
      Array.from({ length: n }, (_, j) => word(j)), // every list long
      Array.from({ length: n }, (_, j) => word(4000 + 97 * j)), // every list short
      Array.from({ length: n }, (_, j) => word(j % 2 ? j : 3000 + j)), // mixed
      [...Array.from({ length: n - 1 }, (_, j) => word(10 + j)), word(10)], // a word twice
    ];
    for (const q of qs) {
      for (const start of [0, 200_000]) {
        for (const k of [1, 100, 3000]) {
          const expected = searchSegments(b, q, k, start, deleted, true);
          assert.equal(searchSegments(b, q, k, start, deleted), expected, `${q.join(' ')} from ${start}, k ${k}`);
          compared += expected.length;
        }
      }
    }
  }
  assert.ok(compared > 120_000, `${compared} rows compared`);
});

test('one index: fast = exhaustive, with a row filter and ties (duplicate documents score alike)', () => {
  const docs = corpus(130_000, 5);
  for (let i = 0; i < 2000; i++) docs.push([...docs[i]!]);
  const index = buildBm25FromTerms(docs);
  for (const q of queries(13).slice(0, 30)) {
    assert.equal(searchBm25(index, q, 200), searchBm25(index, q, 200, undefined, { exhaustive: true }), q.join(' '));
    const odd = (row: number) => row % 2 === 1;
    assert.equal(searchBm25(index, q, 100, odd), searchBm25(index, q, 100, odd, { exhaustive: true }), `${q.join(' ')} (odd rows)`);
  }
});

test('term at a time: rare and common words, a filter that throws leaves nothing behind for the next search', () => {
  const small = buildBm25FromTerms(corpus(2000, 9));
  // Ten or more lists are scored term at a time with or without a filter, fewer only with one.
  const rare = Array.from({ length: 10 }, (_, j) => word(4000 + 50 * j));
  const common = Array.from({ length: 10 }, (_, j) => word(1 + j));
  for (const index of [small, segments[0]!]) {
    for (const q of [rare, common, [...rare, ...common]]) {
      assert.equal(searchBm25(index, q, 50), searchBm25(index, q, 50, undefined, { exhaustive: true }), q.join(' '));
      let seen = 0;
      assert.throws(() =>
        searchBm25(index, q, 50, () => {
          if (++seen === 3) throw new Error('filter failed');
          return true;
        }),
      );
      assert.ok(seen === 3, `${q.join(' ')}: the filter ran`);
      assert.equal(searchBm25(index, q, 50), searchBm25(index, q, 50, undefined, { exhaustive: true }), `${q.join(' ')} after a throw`);
    }
  }
});

test.run();
