// Patterns: a gallery of visual patterns with their medoid posts' thumbnails, recurrent elements as
// chips, lookalike patterns, and the late share (how much of the pattern is recent) with its size
// over generations.
import { get, qs, thumbnailsOf } from './api.js';
import { sparkline } from './charts.js';
import { chips, el, fill, fmt, outLink, shareBar } from './dom.js';
import { pagedList, pageParams, select, showError, startPage, WINDOWS } from './layout.js';

const SORTS = [
  ['contentCount', 'posts'],
  ['lateShare', 'late share'],
  ['confidence', 'confidence'],
  ['totalEngagement', 'engagement'],
  ['firstSeenAt', 'first seen'],
];

function thumb(uuid, thumbs) {
  const box = el('div', { class: 'placeholder' }, '…');
  void thumbs.get(uuid).then((t) => {
    if (t?.src) box.replaceWith(el('img', { src: t.src, alt: 'medoid post of the pattern', class: 'pattern-thumb' }));
    else if (t?.remote) fill(box, outLink(t.remote, 'remote media'));
    else fill(box, 'no image');
  });
  return box;
}

function card(p, thumbs) {
  const lookalikes = el('div', { class: 'small lookalikes' }, el('span', { class: 'muted' }, 'lookalikes: …'));
  const trend = el('div', {
    class: 'trend',
    title: 'posts in the pattern, generation by generation',
    role: 'img',
    'aria-label': 'posts in the pattern by generation',
  });
  const node = el(
    'article',
    { class: 'card pattern', dataset: { key: p.patternKey } },
    el('div', { class: 'title' }, el('b', {}, p.label)),
    el(
      'div',
      { class: 'thumbs' },
      p.medoidContentUuids.slice(0, 3).map((u) => thumb(u, thumbs)),
    ),
    el(
      'div',
      { class: 'figures' },
      el('span', {}, el('b', {}, fmt.int(p.contentCount)), ' posts'),
      el('span', {}, el('b', {}, fmt.int(p.creatorCount)), ' creators'),
      el('span', {}, el('b', {}, fmt.compact(p.totalEngagement)), ' engagement'),
      el('span', { title: 'confidence (0..1)' }, 'confidence ', el('b', {}, fmt.num(p.confidence))),
      el('span', {}, `since ${fmt.date(p.firstSeenAt)}`),
    ),
    el(
      'div',
      { class: 'small', title: 'late share: posts in the later half of the scope over all (docs/fields.md)' },
      `late share ${fmt.pct(p.lateShare)} (early ${p.earlyCount} / late ${p.lateCount}) `,
      shareBar(p.lateShare ?? 0, 'late'),
    ),
    el(
      'div',
      { class: 'chips' },
      p.recurrentElements
        .slice(0, 8)
        .map((e) => el('span', { class: `chip el-${e.type}`, title: `${e.type}, support ${fmt.pct(e.support)}` }, e.value)),
    ),
    trend,
    lookalikes,
  );
  // A line needs 3 points to say anything: 1 or 2 generations are said in words.
  if (p.trajectory.length >= 3)
    requestAnimationFrame(() =>
      sparkline(
        trend,
        p.trajectory.map((t) => t.contentCount),
        { width: 160, height: 40 },
      ),
    );
  else if (p.trajectory.length === 2) {
    const [a, b] = p.trajectory;
    fill(
      trend,
      el('span', { class: 'small trend-text' }, `${fmt.int(a.contentCount)} → ${fmt.int(b.contentCount)} posts over 2 generations`),
    );
  } else fill(trend, el('span', { class: 'muted small trend-text' }, `first generation: ${p.generation}`));
  return { node, lookalikes };
}

startPage('patterns.html', async (main) => {
  const params = pageParams();
  const state = { scope: params.get('scope') ?? '30d', sort: params.get('sort') ?? 'contentCount' };
  const gallery = el('section', { class: 'gallery', id: 'gallery' });
  const status = el('p', { class: 'muted small' });

  const { load, more } = pagedList(gallery, state, async (cursor) => {
    const r = await get(`/intelligence/patterns${qs({ ...state, limit: 12, cursor: cursor ?? undefined })}`);
    const thumbs = thumbnailsOf(r.items.flatMap((p) => p.medoidContentUuids.slice(0, 3)));
    const cards = r.items.map((p) => card(p, thumbs));
    fill(status, r.total ? `${r.total} patterns · generation ${r.generation}` : 'No visual pattern in this scope.');
    // Lookalikes come with each pattern's own read; the gallery is usable before they arrive.
    for (const [i, c] of cards.entries())
      get(`/intelligence/patterns/${encodeURIComponent(r.items[i].patternKey)}/lookalikes`)
        .then((l) =>
          fill(
            c.lookalikes,
            el('span', { class: 'muted' }, 'lookalikes: '),
            l.lookalikes.length ? chips(l.lookalikes.slice(0, 4).map((x) => x.label)) : el('span', { class: 'muted' }, 'none'),
          ),
        )
        .catch((err) => showError(c.lookalikes, err));
    return { nodes: cards.map((c) => c.node), next: r.nextCursor };
  });

  fill(
    main,
    el('h1', {}, 'Patterns'),
    el(
      'div',
      { class: 'controls' },
      select('Scope', 'scope', WINDOWS, state.scope, (v) => ((state.scope = v), load())),
      select('Sort by', 'sort', SORTS, state.sort, (v) => ((state.sort = v), load())),
    ),
    status,
    gallery,
    el('div', { class: 'pager' }, more),
  );
  await load();
});
