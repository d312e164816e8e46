// Narratives: a window's narratives by burst, spread over themes (or momentum, emergence, volume, engagement), each with its
// lifecycle, a sparkline of daily posts, the change against the previous period and sentiment;
// a platform filter; one theme's narratives (?theme=, from the themes page); and a text search of
// the narrative map.
import { get, qs } from './api.js';
import { chips, el, fill, fmt, lifecycleBadge, sentimentBadge } from './dom.js';
import { pagedList, pageParams, select, startPage, WINDOWS } from './layout.js';
import { changeText, SORTS, sparkBox } from './list-parts.js';

const PAGE = 20;

function row(n, { spark }) {
  return el(
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
        el(
          'span',
          { title: 'burst_score (0 or more): posts above what its history predicts' },
          'burst ',
          el('b', {}, fmt.num(n.burst_score, 1)),
        ),
        el('span', { title: 'momentum_score (0..1)' }, 'momentum ', el('b', {}, fmt.num(n.momentum_score))),
        el('span', { title: 'emerging_score (0..1)' }, 'emerging ', el('b', {}, fmt.num(n.emerging_score))),
        sentimentBadge(n.sentiment_label, n.sentiment_score),
      ),
      chips(n.top_tags.slice(0, 5)),
    ),
    sparkBox(spark ? n.daily_counts : null),
    el('div', { class: 'side' }, changeText(n.period_change)),
  );
}

/** What the list shows when it holds one theme's narratives: the theme, and the way back to them all. */
function themeBanner(t, onClear) {
  return el(
    'p',
    { class: 'theme-banner', id: 'theme-banner' },
    'Theme: ',
    el('b', {}, t.label),
    el(
      'span',
      { class: 'muted' },
      ` · ${fmt.int(t.narrative_count)} ${fmt.unit(t.narrative_count, 'narrative')} in the ${t.window_key} window · `,
    ),
    el('button', { type: 'button', class: 'link-button', id: 'clear-theme', on: { click: onClear } }, 'all narratives'),
  );
}

startPage('index.html', async (main) => {
  const params = pageParams();
  const state = {
    window: params.get('window') ?? '30d',
    sort: params.get('sort') ?? 'burst',
    platform: params.get('platform') ?? '',
    q: params.get('q') ?? '',
    theme: params.get('theme') ?? '',
  };
  const [health, theme] = await Promise.all([
    get('/health'),
    state.theme ? get(`/themes/${encodeURIComponent(state.theme)}`).then((d) => d.theme) : null,
  ]);
  // A theme belongs to one window: the list shows it there.
  if (theme) state.window = theme.window_key;
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
    const { window, sort, platform, theme } = state;
    const r = await get(`/narratives/trending${qs({ window, sort, platform, theme, limit: PAGE, offset: from, daily: true })}`);
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
  const banner = el('div');
  const clearTheme = () => {
    state.theme = '';
    fill(banner);
  };
  if (theme)
    fill(
      banner,
      themeBanner(theme, () => (clearTheme(), load())),
    );
  fill(
    main,
    el('h1', {}, 'Narratives'),
    el(
      'div',
      { class: 'controls' },
      // Another window leaves the theme (a theme is of one window).
      select('Window', 'window', WINDOWS, state.window, (v) => ((state.window = v), clearTheme(), load())),
      select('Sort by', 'sort', SORTS, state.sort, (v) => ((state.sort = v), load())),
      select('Platform', 'platform', platforms, state.platform, (v) => ((state.platform = v), load())),
      searchForm,
    ),
    banner,
    status,
    list,
    el('div', { class: 'pager' }, more),
  );
  await load();
});
