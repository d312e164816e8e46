// Narratives: a window's narratives by momentum (or emergence, volume, engagement), each with its
// lifecycle, a sparkline of daily posts, the change against the previous period and sentiment;
// a platform filter; and a text search of the narrative map.
import { get, qs } from './api.js';
import { sparkline } from './charts.js';
import { chips, el, fill, fmt, lifecycleBadge, sentimentBadge } from './dom.js';
import { pagedList, pageParams, select, startPage, WINDOWS } from './layout.js';

const SORTS = [
  ['momentum', 'momentum'],
  ['emerging', 'emerging score'],
  ['volume', 'volume (posts)'],
  ['engagement', 'engagement'],
];
const PAGE = 20;

/** The change against the previous period, named by the period it is (7 days; 3 in the 7d window: docs/fields.md). */
function changeText(c) {
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

function row(n, { spark }) {
  const sparkBox = el('div', {
    class: 'spark-box',
    title: 'posts a day over the window',
    role: 'img',
    'aria-label': 'posts a day over the window',
  });
  const node = el(
    'article',
    { class: 'card narrative-row', dataset: { id: n.id } },
    el(
      'div',
      {},
      el(
        'div',
        {},
        el('a', { class: 'title', href: `narrative.html?id=${encodeURIComponent(n.id)}` }, n.label),
        ' ',
        lifecycleBadge(n.lifecycle),
      ),
      el('div', { class: 'muted small' }, n.summary),
      el(
        'div',
        { class: 'figures' },
        el('span', {}, el('b', {}, fmt.int(n.content_count)), ' posts'),
        el('span', {}, el('b', {}, fmt.int(n.creator_count)), ' creators'),
        el('span', {}, el('b', {}, fmt.compact(n.total_engagement)), ' engagement'),
        el('span', { title: 'momentum_score (0..1)' }, 'momentum ', el('b', {}, fmt.num(n.momentum_score))),
        el('span', { title: 'emerging_score (0..1)' }, 'emerging ', el('b', {}, fmt.num(n.emerging_score))),
        sentimentBadge(n.sentiment_label, n.sentiment_score),
      ),
      chips(n.top_tags.slice(0, 5)),
    ),
    sparkBox,
    el('div', { class: 'side' }, changeText(n.period_change)),
  );
  if (spark && n.daily_counts) requestAnimationFrame(() => sparkline(sparkBox, n.daily_counts, { width: sparkBox.clientWidth || 120 }));
  return node;
}

startPage('index.html', async (main) => {
  const params = pageParams();
  const state = {
    window: params.get('window') ?? '30d',
    sort: params.get('sort') ?? 'momentum',
    platform: params.get('platform') ?? '',
    q: params.get('q') ?? '',
  };
  const health = await get('/health');
  const list = el('section', { class: 'narrative-list', id: 'narratives' });
  const status = el('p', { class: 'muted small', id: 'list-status' });

  const searchBox = el('input', { type: 'search', name: 'q', id: 'q', value: state.q, placeholder: 'words in labels, tags, posts' });
  const searchForm = el('form', { class: 'control', id: 'map-search' }, el('label', { for: 'q' }, 'Search the map'), searchBox);

  const { load, more } = pagedList(list, state, async (offset) => {
    if (state.q) {
      const r = await get(`/narratives/search${qs({ q: state.q, window: state.window, limit: 100 })}`);
      fill(status, `${r.items.length} narratives match "${state.q}" (by text rank; clear the search for the trending list)`);
      return { nodes: r.items.map((n) => row(n, { spark: false })), next: null };
    }
    const from = offset ?? 0;
    const r = await get(
      `/narratives/trending${qs({ window: state.window, sort: state.sort, platform: state.platform, limit: PAGE, offset: from, daily: true })}`,
    );
    fill(status, `${Math.min(r.total, from + r.items.length)} of ${r.total} narratives · generation ${r.generation}`);
    return { nodes: r.items.map((n) => row(n, { spark: true })), next: r.next_offset };
  });

  searchForm.addEventListener('submit', (e) => {
    e.preventDefault();
    state.q = searchBox.value.trim();
    void load();
  });
  searchBox.addEventListener('search', () => {
    if (searchBox.value === '' && state.q !== '') {
      state.q = '';
      void load();
    }
  });
  const platforms = [['', 'all platforms'], ...(health.platforms ?? []).map((p) => [p, p])];
  fill(
    main,
    el('h1', {}, 'Narratives'),
    el(
      'div',
      { class: 'controls' },
      select('Window', 'window', WINDOWS, state.window, (v) => ((state.window = v), load())),
      select('Sort by', 'sort', SORTS, state.sort, (v) => ((state.sort = v), load())),
      select('Platform', 'platform', platforms, state.platform, (v) => ((state.platform = v), load())),
      searchForm,
    ),
    status,
    list,
    el('div', { class: 'pager' }, more),
  );
  await load();
});
