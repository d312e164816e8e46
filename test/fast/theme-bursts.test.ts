// When narratives are told, for the themes (core/clustering/theme-bursts.ts; docs/fields.md,
// "Themes"): narratives that burst at the same hours have alike excesses over the window's profile
// and carry a time weight near BURST.share; everyday talk spread over the window as its posts are
// has no burst and no time part (its excess is chance, below the noise allowance), however many posts it holds (a
// window of one large crisis and large everyday narratives does not make the everyday ones alike);
// and one event told in two languages is one theme, two everyday subjects two.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { BURST, burstProfiles } from '../../core/clustering/theme-bursts.ts';
import { groupNarratives } from '../../core/clustering/themes.ts';
import { seededRandom } from '../../core/stats/seeded-random.ts';

const DAY = 86_400_000;
const WINDOW = { start: 0, end: 30 * DAY };

function cos(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let s = 0;
  let x = 0;
  let y = 0;
  for (let k = 0; k < a.length; k++) {
    s += a[k]! * b[k]!;
    x += a[k]! * a[k]!;
    y += b[k]! * b[k]!;
  }
  return x && y ? s / Math.sqrt(x * y) : 0;
}

/** A 30-day window of `n`-post narratives: three everyday (uniform over the window), two bursting on day 10, and a crowd bursting then too. */
function window(n: number) {
  const rand = seededRandom(n);
  const flat = (k: number) => Float64Array.from({ length: k }, () => rand() * WINDOW.end);
  // A burst: about two days from day 10, densest in the middle.
  const burst = (k: number) => Float64Array.from({ length: k }, () => 10 * DAY + ((rand() + rand() + rand()) / 3) * 2 * DAY);
  const groups = [flat(n), flat(n), flat(n), burst(n), burst(n / 2)];
  const windowTimes = Float64Array.from([...groups.flatMap((g) => [...g]), ...burst(4 * n), ...flat(3 * n)]);
  return burstProfiles(windowTimes, groups, WINDOW.start, WINDOW.end);
}

test('bursts: narratives bursting at the same hours are alike in time; everyday ones are not, at any size', () => {
  for (const n of [50, 300, 3000, 30000]) {
    const p = window(n);
    const [a, b, c, x, y] = p.map((q) => q.excess);
    assert.ok(cos(x!, y!) > 0.95, `n ${n}: burst-burst ${cos(x!, y!)}`);
    for (const f of [a!, b!, c!]) assert.ok(cos(f, x!) < 0.05, `n ${n}: flat-burst ${cos(f, x!)}`);
    // Chance only: the excess of two everyday narratives is noise, however dense (over the window's own
    // profile, which the crowd's burst dominates, they would be alike: cosine 0.99 at n 30,000).
    for (const [f, g] of [
      [a!, b!],
      [a!, c!],
      [b!, c!],
    ])
      assert.ok(cos(f!, g!) < 0.6, `n ${n}: flat-flat ${cos(f!, g!)}`);
    for (const q of p.slice(0, 3)) {
      assert.is(q.burst, 0, `n ${n}: an everyday narrative has no burst`);
      // Nothing above chance: its time part is zero (it cannot join a theme by its hours), its weight held.
      assert.ok(Math.abs(q.weight - BURST.share / 2) < 1e-12, `n ${n}: weight ${q.weight}`);
      assert.ok(q.excess.every((e) => e === 0));
    }
    if (n >= 300) for (const q of p.slice(3)) assert.ok(q.burst > 0.85 && q.weight > 0.9 * BURST.share, `n ${n}: ${q.burst}`);
  }
});

test('bursts: a narrative that is the whole window, an empty one, a window shorter than a bin', () => {
  const times = Float64Array.from({ length: 100 }, (_, i) => i * 3_600_000);
  const [whole, none] = burstProfiles(times, [times, []], 0, 100 * 3_600_000);
  assert.ok(
    whole!.excess.every((e) => e === 0),
    'no excess over itself',
  );
  assert.is(whole!.burst, 0);
  assert.is(whole!.weight, BURST.share / 2);
  assert.equal([none!.burst, none!.weight], [0, 0]);
  const [short] = burstProfiles([0, 1000], [[0, 1000]], 0, 2000);
  assert.is(short!.excess.length, 1);
  assert.equal([short!.excess[0], short!.burst], [0, 0]);
});

test('themes: one event told in two languages is one theme by its burst; two everyday subjects with nothing in common stay two', () => {
  // Content: four orthogonal directions (no shared word or centroid direction): the event in English
  // and in Portuguese, two everyday subjects. Time: as in window(300), the event's narratives burst on day 10.
  const p = window(300);
  const order = [3, 4, 0, 1];
  const bins = p[0]!.excess.length;
  const items = order.map((g, i) => {
    const { excess, weight } = p[g]!;
    const v = new Float32Array(4 + bins);
    v[i] = Math.sqrt(1 - weight);
    const norm = Math.hypot(...excess) || 1;
    excess.forEach((e, b) => (v[4 + b] = (Math.sqrt(weight) * e) / norm));
    return { centroid: v, size: 300 };
  });
  assert.equal(Array.from(groupNarratives(items).themeOf), [0, 0, 1, 2]);
});

test.run();
