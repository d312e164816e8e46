// Themes: a window's narratives grouped by theme (an event or a subject, and the stories it is told
// in), themes by momentum (or emergence, volume, engagement): each with its figures, a sparkline of
// its daily posts and the change against the previous period, and its narratives beneath. A
// theme's title opens the narratives page with that theme's narratives.
import { get, qs } from './api.js';
import { chips, el, fill, fmt, lifecycleBadge, sentimentBadge } from './dom.js';
import { pagedList, pageParams, select, startPage, WINDOWS } from './layout.js';
import { changeText, SORTS, sparkBox } from './list-parts.js';

const PAGE = 10;

function narrativeItem(n) {
  return el(
    'li',
    { dataset: { id: n.id } },
    el('a', { href: `narrative.html?id=${encodeURIComponent(n.id)}` }, n.label),
    ' ',
    lifecycleBadge(n.lifecycle),
    ' ',
    el('span', { class: 'muted small' }, `${fmt.int(n.content_count)} posts · momentum ${fmt.num(n.momentum_score)}`),
  );
}

function themeCard(t) {
  const count = `${fmt.int(t.narrative_count)} ${fmt.unit(t.narrative_count, 'narrative')}`;
  return el(
    'article',
    { class: 'card theme-card', dataset: { id: t.id } },
    el(
      'div',
      { class: 'narrative-row theme-head' },
      el(
        'div',
        {},
        el(
          'h2',
          { class: 'theme-title' },
          el('a', { class: 'title', href: `index.html?${new URLSearchParams({ window: t.window_key, theme: t.id })}` }, t.label),
          ' ',
          lifecycleBadge(t.lifecycle),
        ),
        el('div', { class: 'muted small' }, t.summary),
        el(
          'div',
          { class: 'figures' },
          el('span', {}, el('b', {}, count)),
          el('span', {}, el('b', {}, fmt.int(t.content_count)), ' posts'),
          el('span', {}, el('b', {}, fmt.int(t.creator_count)), ' creators'),
          el('span', {}, el('b', {}, fmt.compact(t.total_engagement)), ' engagement'),
          el(
            'span',
            { title: 'burst_score (0 or more): posts above what its history predicts' },
            'burst ',
            el('b', {}, fmt.num(t.burst_score, 1)),
          ),
          el('span', { title: 'momentum_score (0..1)' }, 'momentum ', el('b', {}, fmt.num(t.momentum_score))),
          sentimentBadge(t.sentiment_label, t.sentiment_score),
        ),
        chips(t.top_tags.slice(0, 5)),
      ),
      sparkBox(t.daily_counts),
      el('div', { class: 'side' }, changeText(t.period_change)),
    ),
    el('ul', { class: 'theme-narratives', 'aria-label': `the ${count} of this theme` }, t.narratives.map(narrativeItem)),
  );
}

startPage('themes.html', async (main) => {
  const params = pageParams();
  const state = { window: params.get('window') ?? '30d', sort: params.get('sort') ?? 'burst', platform: params.get('platform') ?? '' };
  const health = await get('/health');
  const list = el('section', { class: 'narrative-list', id: 'themes' });
  const status = el('p', { class: 'muted small', id: 'list-status' });
  const { load, more } = pagedList(list, state, async (offset) => {
    const from = offset ?? 0;
    const r = await get(`/themes${qs({ ...state, limit: PAGE, offset: from, daily: true })}`);
    const narratives = r.items.reduce((a, t) => a + t.narrative_count, 0);
    fill(
      status,
      `${Math.min(r.total, from + r.items.length)} of ${r.total} themes (${fmt.int(narratives)} narratives on this page) · generation ${r.generation}`,
    );
    return { nodes: r.items.map(themeCard), next: r.next_offset };
  });
  const platforms = [['', 'all platforms'], ...(health.platforms ?? []).map((p) => [p, p])];
  fill(
    main,
    el('h1', {}, 'Themes'),
    el(
      'p',
      { class: 'muted small' },
      'A theme is an event or a subject; its narratives are the stories it is told in (docs/fields.md, "Themes"). ',
      'Found from the data: a narrative unlike every other is a theme of its own.',
    ),
    el(
      'div',
      { class: 'controls' },
      select('Window', 'window', WINDOWS, state.window, (v) => ((state.window = v), load())),
      select('Sort by', 'sort', SORTS, state.sort, (v) => ((state.sort = v), load())),
      select('Platform', 'platform', platforms, state.platform, (v) => ((state.platform = v), load())),
    ),
    status,
    list,
    el('div', { class: 'pager' }, more),
  );
  await load();
});
