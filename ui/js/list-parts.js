// What the narratives and the themes lists show alike: their sort keys, a sparkline of an item's
// daily posts, and its change against the previous period.
import { sparkline } from './charts.js';
import { el, fmt } from './dom.js';

/** The list orders of GET /narratives/trending and GET /themes (docs/api.md). */
export const SORTS = [
  ['burst', 'what happened (burst)'],
  ['momentum', 'momentum'],
  ['emerging', 'emerging score'],
  ['volume', 'volume (posts)'],
  ['engagement', 'engagement'],
];

/** The change against the previous period, named by the period it is (7 days; 3 in the 7d window: docs/fields.md). */
export function changeText(c) {
  if (!c || c.days === 0) return el('span', { class: 'muted' }, '–');
  const cls = c.ratio === null ? 'change-up' : c.ratio >= 0 ? 'change-up' : 'change-down';
  const days = `${c.days} ${fmt.unit(c.days, 'day')}`;
  return el(
    'span',
    { class: 'period-change', title: `${c.current} posts in the last ${days} against ${c.previous} in the ${days} before` },
    el('span', { class: cls }, c.ratio === null ? 'new' : fmt.signedPct(c.ratio)),
    el('span', { class: 'muted small period' }, ` last ${days} vs the ${days} before`),
  );
}

/** A box for the sparkline of daily posts, drawn once it is in the page (its width known); empty without counts. */
export function sparkBox(counts) {
  const box = el('div', {
    class: 'spark-box',
    title: 'posts a day over the window',
    role: 'img',
    'aria-label': 'posts a day over the window',
  });
  if (counts) requestAnimationFrame(() => sparkline(box, counts, { width: box.clientWidth || 120 }));
  return box;
}
