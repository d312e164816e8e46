// core/stats/story-metrics.ts, the real-data bench's scores, on hand-made clusterings: F1, best F1
// per crisis, purity with off-topic a label of its own, the catch-all rule at its edges, and the
// whole score of a window.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { bestF1, catchAllReason, f1, mostlyOffTopic, purity, scoreStories, type PostTruth } from '../../core/stats/story-metrics.ts';

const close = (a: number, b: number, what = '') => assert.ok(Math.abs(a - b) < 1e-12, `${what} ${a} vs ${b}`);

test('F1 of a cluster against a true set', () => {
  close(f1(8, 10, 10), 0.8);
  close(f1(5, 5, 20), 0.4, 'a pure cluster of a quarter of the crisis');
  close(f1(0, 10, 10), 0);
  assert.is(f1(0, 0, 0), 0);
});

test('each crisis its best F1 over the clusters; a crisis no cluster touches scores 0', () => {
  const truth = new Map([
    ['a', 10],
    ['b', 4],
    ['c', 3],
  ]);
  const clusters = [
    [...Array(8).fill('a'), null, null], // a: 2*8/(10+10) = 0.8
    ['a', 'a', 'b', 'b', 'b'], // b: 2*3/(5+4) = 0.667; a: 2*2/15
    [null, null],
  ];
  const best = bestF1(clusters, truth);
  close(best.get('a')!, 0.8);
  close(best.get('b')!, 2 / 3);
  assert.is(best.get('c'), 0);
  assert.equal([...best.keys()], ['a', 'b', 'c']);
});

test('purity: the majority label over the clustered posts', () => {
  close(
    purity([
      ['a', 'a', 'off-topic'],
      ['b', 'b', 'b', 'b', 'a'],
    ]),
    6 / 8,
  );
  close(purity([['off-topic', 'off-topic'], []]), 1);
  assert.ok(Number.isNaN(purity([])));
});

test('catch-all: larger than max(200, 5% of the window) and mostly off-topic or mixing crises', () => {
  const of = (a: number, b: number, off: number) => [...Array(a).fill('a'), ...Array(b).fill('b'), ...Array(off).fill(null)];
  assert.is(catchAllReason(of(0, 0, 200), 1000), null, '200 posts is not more than 200');
  assert.is(catchAllReason(of(0, 0, 201), 1000), 'off-topic');
  assert.is(catchAllReason(of(100, 0, 101), 1000), 'off-topic', 'more than half off-topic');
  assert.is(catchAllReason(of(101, 0, 100), 1000), null, 'half on one crisis');
  assert.is(catchAllReason(of(130, 70, 1), 1000), 'mixed', 'under 70% of the on-topic from one crisis');
  assert.is(catchAllReason(of(140, 60, 1), 1000), null, '70% from one crisis is enough');
  assert.is(catchAllReason(of(0, 0, 500), 10_000), null, '5% of 10,000 posts is 500');
  assert.is(catchAllReason(of(0, 0, 501), 10_000), 'off-topic');
  assert.ok(mostlyOffTopic([null, null, 'a']) && !mostlyOffTopic([null, 'a']));
});

test('a window scored: best F1, both purities, off-topic inside, noise, catch-alls', () => {
  const posts = new Map<string, PostTruth>();
  const add = (prefix: string, n: number, t: PostTruth) => {
    for (let i = 0; i < n; i++) posts.set(`${prefix}${i}`, t);
  };
  add('fire-help-', 150, { crisis: 'fire', story: 'donations' });
  add('fire-sad-', 50, { crisis: 'fire', story: 'sympathy' });
  add('flood-', 100, { crisis: 'flood', story: 'damage' });
  add('off-', 4000, { crisis: null });
  const ids = (prefix: string, from: number, to: number) => Array.from({ length: to - from }, (_, i) => `${prefix}${from + i}`);
  const clusters = new Map([
    ['n1', [...ids('fire-help-', 0, 150), ...ids('fire-sad-', 0, 50)]],
    ['n2', [...ids('flood-', 0, 80), ...ids('off-', 0, 20)]],
    ['n3', ids('off-', 20, 320)],
  ]);
  const s = scoreStories(posts, clusters);
  assert.is(s.clusters, 3);
  assert.equal(Object.keys(s.bestF1), ['fire', 'flood']);
  close(s.bestF1.fire!, 1);
  close(s.bestF1.flood!, (2 * 80) / 200);
  close(s.meanBestF1, (1 + 0.8) / 2);
  close(s.purity, (200 + 80 + 300) / 600, 'purity');
  close(s.storyPurity!, (150 + 80 + 300) / 600, 'story purity');
  close(s.offTopicInside, 320 / 4000);
  close(s.noiseShare, (4300 - 600) / 4300);
  // 4,300 posts: the size bar is max(200, 215) = 215; n3 (300, all off-topic) is over it, n1 (200) is not.
  assert.equal(s.catchAlls, [{ id: 'n3', size: 300, reason: 'off-topic', offTopicShare: 1 }]);
  assert.is(scoreStories(new Map([...posts].filter(([, t]) => t.crisis === null)), new Map()).storyPurity, null);
  assert.throws(() => scoreStories(posts, new Map([['x', ['nobody']]])), /member nobody is not among the window's posts/);
});

test.run();
