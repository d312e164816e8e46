// core/infra/assert.ts and the preconditions it guards: each throws AssertionFailed naming what was
// expected, where the code used to clamp or trust silently.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { AssertionFailed, assertInt, assertSameLength, assertSorted } from '../../core/infra/assert.ts';
import { buildBm25FromTerms, searchBm25 } from '../../core/ranking/bm25.ts';
import { clusterWindow } from '../../core/clustering/kmeans-by-silhouette.ts';
import { lloydKMeans } from '../../core/stats/lloyd-kmeans.ts';

function throwsAssertion(fn: () => unknown, pattern: RegExp): void {
  try {
    fn();
  } catch (err) {
    assert.instance(err, AssertionFailed);
    assert.match((err as Error).message, pattern);
    return;
  }
  assert.unreachable(`expected an AssertionFailed matching ${pattern}`);
}

test('the helpers pass what holds and name what does not', () => {
  assertInt(3, 0, 5, 'x');
  assertSameLength(4, 4, 'rows');
  assertSorted([1, 1, 2, 9], 'times');
  throwsAssertion(() => assertInt(2.5, 0, 5, 'limit'), /limit = 2\.5, expected an integer in \[0, 5\]/);
  throwsAssertion(() => assertInt(-1, 0, 5, 'limit'), /limit = -1/);
  throwsAssertion(() => assertSameLength(3, 4, 'vectors against rows'), /vectors against rows: 3 against 4/);
  throwsAssertion(() => assertSorted([1, 3, 2], 'published_at'), /published_at: not in ascending order at 2 \(3 then 2\)/);
});

test("preconditions of BM25, k-means and the maps' clustering", () => {
  const index = buildBm25FromTerms([['a', 'b'], ['b'], ['c']]);
  assert.is(searchBm25(index, ['b'], 0).length, 0);
  throwsAssertion(() => searchBm25(index, ['b'], -1), /k = -1/);
  throwsAssertion(() => searchBm25(index, ['b'], 5, 9), /first row = 9, expected an integer in \[0, 3\]/);
  throwsAssertion(
    () => lloydKMeans(new Float64Array(7), 2, new Float64Array(4), 10, 1e-4),
    /7 values and 4 centre values are not whole rows of 2/,
  );
  throwsAssertion(() => lloydKMeans(new Float64Array(8), 2, new Float64Array(0), 10, 1e-4), /at least one centre/);
  throwsAssertion(() => clusterWindow(new Float32Array(8), 4, [0, 1, 2]), /row 2 outside the 2 vectors/);
});

test.run();
