// One narrative: daily posts and engagement with spikes marked, sentiment and stance by day, top
// tags, the posts a reader opens first (then all its posts), creators and platform split, the
// story's history over generations (is it the same story as the last run's), and related
// narratives (GET /narratives/{id}/related: the same window's narratives nearest by text centroid).
import { get, qs, thumbnailsOf } from './api.js';
import { feelingChart, volumeChart } from './charts.js';
import { chips, el, fill, fmt, lifecycleBadge, NO_LIFECYCLE, outLink, sentimentBadge, shareBar } from './dom.js';
import { pageParams, showError, startPage } from './layout.js';
import { watchForm } from './watch-form.js';

/** A creator as people know them: the handle, the id when there is none. */
const creatorName = (handle, id) => (handle ? `@${handle}` : id === null || id === undefined ? 'unknown creator' : `creator ${id}`);

/** What an id that was not the narrative's own led to, in words (docs/api.md, "Ids a client can keep"). */
function resolvedText(d) {
  if (d.resolved_by === 'narrative_key')
    return `Opened by its story key ${d.requested_id}: this is the story's narrative in generation ${d.generation}.`;
  return `The link named ${d.requested_id}, this story's narrative in an earlier generation; this is the same story in generation ${d.generation}.`;
}

const stat = (k, v, title) => el('div', { class: 'stat', title }, el('div', { class: 'v' }, v), el('div', { class: 'k' }, k));

function post(p, thumbs) {
  const media = el('div');
  if (thumbs.has(p.uuid))
    void thumbs.get(p.uuid).then((t) => {
      if (t?.src) media.append(el('img', { class: 'thumb', src: t.src, alt: 'thumbnail of the post’s media' }));
      else if (t?.remote) media.append(outLink(t.remote, 'media'));
    });
  return el(
    'div',
    { class: 'post' },
    media,
    el(
      'div',
      {},
      el('div', { class: 'text' }, el('b', {}, p.title ?? ''), p.title && p.description ? ' — ' : '', p.description ?? ''),
      el(
        'div',
        { class: 'figures' },
        el('span', { class: 'creator' }, creatorName(p.creatorHandle, p.creatorId)),
        el('span', {}, p.platform ?? '–'),
        el('span', {}, fmt.date(p.publishedAt)),
        el('span', {}, `${fmt.int(p.likeCount + p.commentCount + p.shareCount)} engagement`),
        p.enrichment?.tone ? el('span', {}, `tone ${p.enrichment.tone}`) : null,
        p.contentUrl ? outLink(p.contentUrl, 'open post') : null,
      ),
    ),
  );
}

function historyTable(traj) {
  const rows = [...traj.points].reverse();
  return el(
    'div',
    { class: 'table-wrap' },
    el(
      'table',
      { id: 'history' },
      el(
        'thead',
        {},
        el(
          'tr',
          {},
          ['generation', 'as of', 'id then', 'posts', 'creators', 'momentum', 'lifecycle', 'sentiment'].map((h) => el('th', {}, h)),
        ),
      ),
      el(
        'tbody',
        {},
        rows.map((p) =>
          el(
            'tr',
            {},
            el('td', {}, p.generation),
            el('td', {}, fmt.dateTime(p.as_of)),
            el('td', { class: 'small' }, p.narrative_id),
            el('td', { class: 'n' }, fmt.int(p.content_count)),
            el('td', { class: 'n' }, fmt.int(p.creator_count)),
            el('td', { class: 'n' }, fmt.num(p.momentum_score)),
            el('td', {}, lifecycleBadge(p.lifecycle) ?? el('span', { class: 'muted', title: NO_LIFECYCLE }, '–')),
            el('td', { class: 'n' }, fmt.num(p.sentiment_score)),
          ),
        ),
      ),
    ),
  );
}

function historyText(n, traj) {
  if (n.source === 'emergent') return 'Emergent: formed by a search answer on this generation; it has no history.';
  const gens = traj.points.length;
  if (gens <= 1) return `New in generation ${traj.generation}: no earlier run had this story (key ${n.narrative_key}).`;
  return (
    `The same story (key ${n.narrative_key}) for ${gens} generations, since ${traj.points[0].generation}: ` +
    'matched from run to run by centroid and shared posts.'
  );
}

/** The title with its lifecycle, the summary, the theme, how the id was resolved, and the figures. */
function heading(d) {
  const n = d.narrative;
  return [
    el('p', { class: 'small' }, el('a', { href: 'index.html' }, '← narratives')),
    el(
      'h1',
      {},
      n.label,
      ' ',
      lifecycleBadge(n.lifecycle) ??
        el('span', { class: 'badge lc-none', id: 'no-lifecycle', title: NO_LIFECYCLE }, 'no lifecycle (7-day window)'),
    ),
    el('p', { class: 'muted' }, n.summary),
    d.theme
      ? el(
          'p',
          { class: 'small', id: 'theme' },
          'Theme: ',
          el('a', { href: `index.html?${new URLSearchParams({ window: n.window_key, theme: d.theme.id })}` }, d.theme.label),
          el(
            'span',
            { class: 'muted' },
            d.theme.narrative_count > 1
              ? ` (${fmt.int(d.theme.narrative_count)} narratives of the ${n.window_key} window)`
              : ' (a theme of its own: no other narrative of the window is about the same thing)',
          ),
        )
      : null,
    d.resolved_by ? el('p', { class: 'small muted', id: 'resolved' }, resolvedText(d)) : null,
    el(
      'div',
      { class: 'stats' },
      stat('posts', fmt.int(n.content_count)),
      stat('creators', fmt.int(n.creator_count)),
      stat('platforms', fmt.int(n.platform_count)),
      stat('engagement', fmt.compact(n.total_engagement), 'likes + comments + shares'),
      stat('burst', fmt.num(n.burst_score, 1), 'burst_score, 0 or more: its busiest day above what its history predicts (docs/fields.md)'),
      stat('momentum', fmt.num(n.momentum_score), 'momentum_score, 0..1 (docs/fields.md)'),
      stat('emerging', fmt.num(n.emerging_score), 'emerging_score, 0..1'),
      stat('velocity', fmt.num(n.velocity), 'slope of daily posts over the last 7 days'),
      stat('sentiment', sentimentBadge(n.sentiment_label, n.sentiment_score)),
    ),
  ];
}

/** The form that sets an alert watch on this story. */
function watchThis(n) {
  return el(
    'details',
    { class: 'watch-this', id: 'watch-this' },
    el('summary', {}, 'Tell me when this moves'),
    el(
      'p',
      { class: 'small muted' },
      'A webhook when this story spikes, changes lifecycle or its momentum rises past a level, ' +
        `checked after each new generation in the ${n.window_key} window. Free.`,
    ),
    watchForm({ target: { kind: 'narrative', narrative_key: n.narrative_key ?? n.id }, windows: [n.window_key], name: n.label }),
  );
}

/** The two charts' headings and words around them (the charts are drawn into `volume` and `feeling` once they are in the page). */
function byDay(n, traj, volume, feeling) {
  const spikes = traj.daily.filter((x) => x.spike);
  const stance = n.sentiment_breakdown?.stance;
  return [
    el('h2', {}, 'Posts and engagement by day'),
    el(
      'p',
      { class: 'small muted' },
      spikes.length
        ? `Spikes (orange): ${spikes.map((s) => fmt.date(s.start)).join(', ')}: days far above the two weeks before them.`
        : 'No spike: no day stood far above the two weeks before it.',
      n.velocity === null
        ? ''
        : ` The dashed orange line is the velocity (${fmt.num(n.velocity)} posts a day per day over the last 7 days)` +
            ` behind the momentum of ${fmt.num(n.momentum_score)}.`,
    ),
    el('div', { class: 'card' }, volume),
    el('h2', {}, 'Sentiment and stance by day'),
    el(
      'p',
      { class: 'small muted' },
      stance
        ? `Over the window: ${fmt.pct(stance.supportive)} supportive, ${fmt.pct(stance.critical)} critical, ` +
            `${fmt.pct(stance.mixed)} mixed, ${fmt.pct(stance.neutral)} neutral (stance read off tone and moods).`
        : 'No post of this narrative has a tone.',
    ),
    el('div', { class: 'card' }, feeling),
  ];
}

function platformsTable(platforms) {
  return el(
    'table',
    { id: 'platforms' },
    el(
      'tbody',
      {},
      platforms.map((p) =>
        el(
          'tr',
          {},
          el('td', {}, p.platform),
          el('td', { class: 'n' }, fmt.int(p.posts)),
          el('td', { class: 'score-cell' }, shareBar(p.share)),
          el('td', { class: 'n' }, fmt.pct(p.share)),
        ),
      ),
    ),
  );
}

function creatorsTable(creators) {
  return el(
    'table',
    { id: 'creators' },
    el('thead', {}, el('tr', {}, el('th', {}, 'creator'), el('th', {}, 'platform'), el('th', { class: 'n' }, 'posts'))),
    el(
      'tbody',
      {},
      creators
        .slice(0, 10)
        .map((c) =>
          el(
            'tr',
            {},
            el('td', { title: `creator id ${c.creatorId}` }, creatorName(c.creatorHandle, c.creatorId)),
            el('td', {}, c.platform),
            el('td', { class: 'n' }, fmt.int(c.posts)),
          ),
        ),
    ),
  );
}

/** What the central posts leave out, in words: the flagged share and repeated texts. */
function centralText(n) {
  const flagged =
    n.flagged_share === null || n.flagged_share === undefined
      ? 'posts the abuse lexicon flags'
      : `posts the abuse lexicon flags (${fmt.pct(n.flagged_share, 1)} of this narrative's)`;
  return `Its most central posts, without ${flagged} and without a text shown before (a retweet and its original are one).`;
}

/**
 * The posts a reader opens first, then every post (most central first, folded: it keeps what the first
 * leave out), beside the platforms, creators and related narratives (`related` is filled later).
 */
function postsAndPeople(d, thumbs, related) {
  return el(
    'div',
    { class: 'two-col' },
    el(
      'section',
      {},
      el('h2', {}, 'Posts a reader opens first'),
      el('p', { class: 'small muted', id: 'central-text' }, centralText(d.narrative)),
      el(
        'div',
        { class: 'card', id: 'central-posts' },
        d.central_posts.length ? d.central_posts.map((p) => post(p, thumbs)) : el('p', { class: 'muted' }, 'none left to show'),
      ),
      el(
        'details',
        { id: 'all-posts' },
        el('summary', {}, `All ${fmt.int(d.posts.total)} posts, most central first (the first ${fmt.int(d.posts.items.length)})`),
        el(
          'div',
          { class: 'card', id: 'posts' },
          d.posts.items.map((p) => post(p, thumbs)),
        ),
      ),
    ),
    el(
      'section',
      {},
      el('h2', {}, 'Platforms'),
      platformsTable(d.platforms),
      el('h2', {}, 'Creators'),
      creatorsTable(d.creators),
      el('h2', {}, 'Related narratives'),
      related,
    ),
  );
}

/** Related: the same window's narratives about the same thing (by text centroid, not by shared words). */
function showRelated(related, path, n) {
  get(`/narratives/${path}/related${qs({ limit: 5 })}`)
    .then((r) => {
      const others = r.items;
      fill(
        related,
        others.length
          ? others.map((x) =>
              el(
                'li',
                {},
                el('a', { href: `narrative.html?id=${encodeURIComponent(x.id)}` }, x.label),
                ' ',
                el(
                  'span',
                  { class: 'muted small', title: 'cosine of the two narratives’ text centroids' },
                  `${fmt.int(x.content_count)} posts · similarity ${fmt.num(x.similarity)}`,
                ),
              ),
            )
          : el('li', { class: 'muted' }, `none this close (similarity ≥ ${fmt.num(r.min_similarity)}) in the ${n.window_key} window`),
      );
    })
    .catch((err) => showError(related, err));
}

startPage('narrative.html', async (main) => {
  const id = pageParams().get('id');
  if (!id) {
    fill(main, el('p', {}, 'No narrative chosen: ', el('a', { href: 'index.html' }, 'pick one from the list'), '.'));
    return;
  }
  const path = encodeURIComponent(id);
  const [d, traj] = await Promise.all([get(`/narratives/${path}${qs({ limit: 10 })}`), get(`/narratives/${path}/trajectory`)]);
  const n = d.narrative;
  const withMedia = [...d.central_posts, ...d.posts.items].filter((p) => ['image', 'video', 'carousel'].includes(p.contentType));
  const thumbs = thumbnailsOf(withMedia.map((p) => p.uuid));
  const volume = el('div', { class: 'chart', id: 'volume-chart' });
  const feeling = el('div', { class: 'chart', id: 'feeling-chart' });
  const related = el('ul', { id: 'related' }, el('li', { class: 'muted' }, 'looking…'));
  fill(
    main,
    ...heading(d),
    watchThis(n),
    ...byDay(n, traj, volume, feeling),
    el('h2', {}, 'Top tags'),
    chips(n.top_tags),
    postsAndPeople(d, thumbs, related),
    el('h2', {}, 'History'),
    el('p', { id: 'history-text' }, historyText(n, traj)),
    traj.points.length ? historyTable(traj) : null,
  );
  volumeChart(volume, traj.daily, { velocity: n.velocity });
  feelingChart(feeling, traj.daily);
  showRelated(related, path, n);
});
