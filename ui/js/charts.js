// Charts by uPlot (served from node_modules; canvas, fast at thousands of points): a sparkline for
// list rows, and the time series of the narrative page. Each chart takes its container's width
// and follows it when the window resizes (laptop and phone widths alike).
import uPlot from '../vendor/uPlot.esm.js';

const css = (name) => getComputedStyle(document.documentElement).getPropertyValue(name).trim() || '#888';

/** Seconds since the epoch of each day's start (uPlot's x scale is in seconds). */
const daySeconds = (starts) => starts.map((iso) => Date.parse(iso) / 1000);

function followWidth(chart, container, height) {
  const ro = new ResizeObserver(() => {
    const w = Math.max(120, Math.floor(container.clientWidth));
    if (w !== chart.width) chart.setSize({ width: w, height });
  });
  ro.observe(container);
}

/** A sparkline of daily counts: no axes, no legend, no cursor; `width` its box's (so it never overflows a narrow card). */
export function sparkline(container, counts, { width = 120, height = 32 } = {}) {
  const xs = counts.map((_, i) => i);
  return new uPlot(
    {
      width: Math.max(40, Math.floor(width)),
      height,
      class: 'spark',
      pxAlign: false,
      cursor: { show: false },
      select: { show: false, left: 0, top: 0, width: 0, height: 0 },
      legend: { show: false },
      scales: { x: { time: false }, y: { range: (u, min, max) => [0, Math.max(1, max)] } },
      axes: [{ show: false }, { show: false }],
      series: [{}, { stroke: css('--accent'), fill: css('--accent-fill'), width: 1.5, points: { show: false } }],
    },
    [xs, counts],
    container,
  );
}

const DAY_S = 86_400;
const dayLabel = new Intl.DateTimeFormat('en-US', { month: 'short', day: 'numeric', timeZone: 'UTC' });

/**
 * The x axis of a daily series: ticks on day boundaries only (every 1, 2, 7, 14 or 28 days, as
 * many as fit), labelled by date; uPlot's own time axis would tick every few hours for a week.
 */
const DAY_AXIS = {
  space: 56,
  incrs: [1, 2, 7, 14, 28, 56].map((d) => d * DAY_S),
  values: (u, ticks) => ticks.map((t) => dayLabel.format(new Date(t * 1000))),
};

/** Days the velocity is the slope over (docs/fields.md: the last 7 days of the window). */
const VELOCITY_DAYS = 7;

/**
 * The velocity's line over the last 7 days: the least-squares line of those days' counts, drawn
 * from the server's slope (`velocity`) through the days' mean; null elsewhere, or without a velocity.
 */
function velocityLine(counts, velocity) {
  const n = Math.min(VELOCITY_DAYS, counts.length);
  if (velocity === null || velocity === undefined || n < 2) return counts.map(() => null);
  const from = counts.length - n;
  const meanY = counts.slice(from).reduce((a, b) => a + b, 0) / n;
  const meanX = (n - 1) / 2;
  return counts.map((_, i) => (i < from ? null : Math.max(0, meanY + velocity * (i - from - meanX))));
}

/**
 * Daily volume (line) with spikes marked (points on the spike days), the momentum's velocity as its
 * line over the last week, and engagement on a second axis.
 */
export function volumeChart(container, daily, { height = 260, velocity = null } = {}) {
  const xs = daySeconds(daily.map((d) => d.start));
  const counts = daily.map((d) => d.content_count);
  const spikes = daily.map((d) => (d.spike ? d.content_count : null));
  const engagement = daily.map((d) => d.engagement);
  const trend = velocityLine(counts, velocity);
  const chart = new uPlot(
    {
      width: Math.max(240, container.clientWidth || 600),
      height,
      scales: { x: { time: true }, posts: { range: (u, min, max) => [0, Math.max(1, max) * 1.1] }, eng: {} },
      axes: [
        DAY_AXIS,
        { scale: 'posts', label: 'posts a day' },
        { scale: 'eng', side: 1, grid: { show: false }, label: 'engagement', size: 60 },
      ],
      series: [
        {},
        { label: 'posts', scale: 'posts', stroke: css('--accent'), fill: css('--accent-fill'), width: 2 },
        {
          label: 'spike',
          scale: 'posts',
          stroke: css('--spike'),
          width: 0,
          paths: () => null,
          points: { show: true, size: 10, fill: css('--spike'), stroke: css('--spike') },
        },
        { label: 'engagement', scale: 'eng', stroke: css('--muted-line'), width: 1, dash: [4, 4] },
        { label: 'velocity (last 7 days)', scale: 'posts', stroke: css('--spike'), width: 2, dash: [8, 4] },
      ],
    },
    [xs, counts, spikes, engagement, trend],
    container,
  );
  followWidth(chart, container, height);
  return chart;
}

/** Daily sentiment score (-1..1) and the stance shares (0..1) of the day's posts. */
export function feelingChart(container, daily, { height = 220 } = {}) {
  const xs = daySeconds(daily.map((d) => d.start));
  const stance = (k) => daily.map((d) => (d.stance ? d.stance[k] : null));
  const chart = new uPlot(
    {
      width: Math.max(240, container.clientWidth || 600),
      height,
      scales: { x: { time: true }, s: { range: [-1, 1] } },
      axes: [DAY_AXIS, { scale: 's', label: 'score / share' }],
      series: [
        {},
        { label: 'sentiment', scale: 's', stroke: css('--ink'), width: 2, spanGaps: true },
        { label: 'supportive', scale: 's', stroke: css('--pos'), width: 1, spanGaps: true },
        { label: 'critical', scale: 's', stroke: css('--neg'), width: 1, spanGaps: true },
        { label: 'mixed', scale: 's', stroke: css('--mixed'), width: 1, spanGaps: true },
        { label: 'neutral', scale: 's', stroke: css('--muted-line'), width: 1, spanGaps: true },
      ],
    },
    [xs, daily.map((d) => d.sentiment_score), stance('supportive'), stance('critical'), stance('mixed'), stance('neutral')],
    container,
  );
  followWidth(chart, container, height);
  return chart;
}
