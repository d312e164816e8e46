// The daily signals a reader looks at first (core/maps/daily-signals.ts): the change against the
// previous period and the spike days, on hand-made series and against a plain restatement of
// their definitions on random ones.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import fc from 'fast-check';
import { lastDaySpikes, periodChange, spikeDays } from '../../core/maps/daily-signals.ts';

test('period change: the last 7 days against the 7 before; half the series when shorter; null ratio from nothing', () => {
  const month = [...Array(16).fill(0), 1, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2, 2];
  assert.equal(periodChange(month), { days: 7, current: 14, previous: 7, ratio: 1 });
  assert.equal(periodChange([4, 2, 1, 1, 1]), { days: 2, current: 2, previous: 3, ratio: -1 / 3 });
  assert.equal(periodChange([0, 0, 3, 5]), { days: 2, current: 8, previous: 0, ratio: null });
  assert.equal(periodChange([5]), { days: 0, current: 0, previous: 0, ratio: null });
  assert.equal(periodChange([]), { days: 0, current: 0, previous: 0, ratio: null });
});

test('spikes: a day far above its two weeks; never in the first 2 days, under 5 posts, or on a steady rise', () => {
  const flat = [3, 4, 3, 5, 4, 3, 4, 3, 4, 5, 3, 4];
  assert.equal(spikeDays([...flat, 30, 4]), [...flat.map(() => false), true, false]);
  // The same jump in the first two days has no baseline.
  assert.equal(spikeDays([3, 30, 4]), [false, false, false]);
  // Four posts after a silent fortnight are under the floor; five are a spike.
  assert.equal(spikeDays([...Array(14).fill(0), 4]).at(-1), false);
  assert.equal(spikeDays([...Array(14).fill(0), 5]).at(-1), true);
  // A steady climb is growth, not a spike.
  assert.ok(!spikeDays(Array.from({ length: 30 }, (_, i) => 10 + i)).some(Boolean));
  // A new story's first burst in a young series (a 7-day window): from nothing to 34 posts in two days.
  assert.equal(spikeDays([0, 0, 0, 0, 0, 9, 25]), [false, false, false, false, false, true, true]);
  // In its first week a day spikes at 4 x (the mean before + 1), not at a mere rise.
  assert.equal(spikeDays([3, 4, 3, 30, 4]), [false, false, false, true, false]);
  assert.equal(spikeDays([6, 7, 6, 8, 9, 10, 11]).some(Boolean), false);
  assert.equal(spikeDays([0, 0, 4]).at(-1), false, 'under the floor of 5 posts');
  // One earlier spike does not hide the next (the median and MAD ignore it).
  const two = [...flat, 40, ...flat.slice(0, 5), 40];
  assert.is(spikeDays(two).filter(Boolean).length, 2);
});

test('spikes and period change agree with their definitions on random series', () => {
  const median = (xs: number[]) => {
    const s = [...xs].sort((a, b) => a - b);
    return s.length % 2 ? s[s.length >> 1]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
  };
  fc.assert(
    fc.property(fc.array(fc.nat(60), { maxLength: 95 }), (xs) => {
      const spikes = spikeDays(xs);
      xs.forEach((x, i) => {
        const base = xs.slice(Math.max(0, i - 14), i);
        const m = median(base.length ? base : [0]);
        const mad = median(base.length ? base.map((b) => Math.abs(b - m)) : [0]);
        const mean = base.reduce((a, b) => a + b, 0) / Math.max(1, base.length);
        const young = base.length >= 2 && base.length < 7 && x >= 4 * (mean + 1);
        const want = x >= 5 && (young || (base.length >= 7 && (x - m) / Math.max(1, 1.4826 * mad) > 3.5));
        assert.is(spikes[i], want, `day ${i} of ${xs}`);
      });
      const c = periodChange(xs);
      const d = Math.min(7, Math.floor(xs.length / 2));
      const sum = (a: number[]) => a.reduce((p, q) => p + q, 0);
      assert.is(c.current, sum(xs.slice(xs.length - d)));
      assert.is(c.previous, sum(xs.slice(xs.length - 2 * d, xs.length - d)));
    }),
  );
});

test('lastDaySpikes is the last day of spikeDays, for series of every length (what an alert reads)', () => {
  // A deterministic mix: quiet series, steady ones, bursts at the end, spikes earlier in the window.
  let seed = 7;
  const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  let spiking = 0;
  for (let len = 0; len <= 130; len++) {
    for (let k = 0; k < 6; k++) {
      const daily = Array.from({ length: len }, () => Math.floor(next() * (k + 1) * 3));
      if (len && k % 2) daily[len - 1] = Math.floor(next() * 60);
      if (len > 20 && k === 4) daily[len - 10] = 80;
      const want = len ? spikeDays(daily)[len - 1]! : false;
      assert.is(lastDaySpikes(daily), want, `length ${len}: ${daily.slice(-16).join(',')}`);
      if (want) spiking++;
    }
  }
  assert.ok(spiking > 50, `${spiking} series end in a spike`);
});

test.run();
