// Alerts: the account's watches (GET /alerts), each with its last events (GET /alerts/{id}: one
// per story, with the conditions and windows it covers) and its delivery log (GET
// /alerts/{id}/deliveries); a paused watch says why and can be resumed; a watch can be deleted; a
// new one made on words or on any new narrative (a narrative's own page makes one on its story).
import { call, get, qs } from './api.js';
import { dataTable, el, fill, fmt } from './dom.js';
import { showError, startPage } from './layout.js';
import { watchForm } from './watch-form.js';

/** What a watch looks at, in words. */
function targetText(t) {
  if (t.kind === 'query') return `narratives matching “${t.query}”`;
  if (t.kind === 'narrative') return `the story ${t.narrative_key}`;
  if (t.kind === 'theme') return `the theme ${t.theme_key}`;
  return 'every narrative';
}

function conditionsText(c) {
  return [
    c.spike ? 'spike' : null,
    c.lifecycle ? `lifecycle change${c.lifecycle.to?.length ? ` to ${c.lifecycle.to.join(' or ')}` : ''}` : null,
    c.momentum ? `momentum ${c.momentum.direction === 'down' ? 'falling below' : 'rising past'} ${c.momentum.level}` : null,
    c.new_narrative ? 'new narrative' : null,
  ]
    .filter(Boolean)
    .join(', ');
}

/** What an event covers, by condition: [condition, its windows]. An event kept before events had matches covers its type in its window. */
function coveredBy(e) {
  const by = new Map();
  for (const m of e.matches ?? [{ condition: e.type.replace('narrative.', ''), window: e.window }])
    by.set(m.condition, [...(by.get(m.condition) ?? []), m.window]);
  return [...by];
}

function eventRow(s) {
  const e = s.event;
  return el(
    'tr',
    {},
    el('td', {}, fmt.dateTime(e.created_at)),
    el(
      'td',
      {},
      ...coveredBy(e).map(([c, windows]) =>
        el('div', {}, c.replace('_', ' '), ' ', el('span', { class: 'small muted' }, windows.join(', '))),
      ),
    ),
    el(
      'td',
      { class: 'text' },
      el('a', { href: `narrative.html?id=${encodeURIComponent(e.narrative.id)}` }, e.narrative.label),
      el('div', { class: 'small muted' }, e.why.text),
    ),
    el('td', {}, s.status),
    el('td', { class: 'n hide-narrow' }, fmt.int(s.attempts)),
  );
}

function attemptRow(a) {
  return el(
    'tr',
    {},
    el('td', {}, fmt.dateTime(a.at)),
    el('td', { class: 'small hide-narrow' }, a.event_id),
    el('td', { class: 'n' }, fmt.int(a.attempt)),
    el('td', {}, a.status === null ? (a.error ?? 'no answer') : String(a.status)),
    el('td', { class: 'n' }, `${fmt.int(a.latency_ms)} ms`),
    el('td', {}, a.outcome),
  );
}

/** A table of `rows`, or one line saying `empty`. */
function table(head, rows, empty) {
  return dataTable(head, el('tbody', {}, rows.length ? rows : el('tr', {}, el('td', { colspan: head.length, class: 'muted' }, empty))));
}

/** One watch's card: what it watches, its state, its events and deliveries (read when opened). */
function watchCard(w, reload) {
  const details = el('div', { class: 'watch-details' });
  const open = el('details', { id: w.id }, el('summary', {}, 'Events and deliveries'), details);
  let loaded = false;
  open.addEventListener('toggle', () => {
    if (!open.open || loaded) return;
    loaded = true;
    const path = encodeURIComponent(w.id);
    Promise.all([get(`/alerts/${path}`), get(`/alerts/${path}/deliveries${qs({ limit: 20 })}`)])
      .then(([one, log]) =>
        fill(
          details,
          el('h3', {}, 'Last events'),
          table(
            [['made'], ['conditions, windows'], ['narrative, and why'], ['delivery'], ['attempts', 'n hide-narrow']],
            one.events.map(eventRow),
            'nothing has fired yet: watches are checked after each new generation',
          ),
          el('h3', {}, 'Delivery log'),
          table(
            [['when'], ['event', 'hide-narrow'], ['attempt', 'n'], ['answer'], ['latency', 'n'], ['outcome']],
            log.items.map(attemptRow),
            'no delivery yet',
          ),
        ),
      )
      .catch((err) => showError(details, err));
  });
  const act = async (method, p) => {
    await call(`/alerts/${encodeURIComponent(w.id)}${p}`, { method });
    await reload();
  };
  return el(
    'div',
    { class: 'card watch', dataset: { watch: w.id } },
    el('div', { class: 'title' }, el('b', {}, w.name ?? targetText(w.target)), ' ', el('span', { class: 'muted small' }, w.id)),
    el(
      'div',
      { class: 'figures' },
      el('span', {}, targetText(w.target)),
      el('span', {}, w.windows.join(', ')),
      el('span', {}, conditionsText(w.conditions)),
      el('span', { class: 'url' }, w.url),
    ),
    w.paused
      ? el(
          'p',
          { class: 'error small' },
          `Paused since ${fmt.dateTime(w.paused.at)}: ${w.paused.reason}. Its events wait. `,
          el('button', { type: 'button', class: 'secondary', on: { click: () => void act('POST', '/resume') } }, 'Resume'),
        )
      : null,
    open,
    el(
      'button',
      { type: 'button', class: 'secondary', on: { click: () => confirm(`Delete the watch ${w.id}?`) && void act('DELETE', '') } },
      'Delete',
    ),
  );
}

startPage('alerts.html', async (main) => {
  const list = el('div', { id: 'watches' });
  async function load() {
    const r = await get('/alerts');
    fill(
      list,
      r.items.length
        ? r.items.map((w) => watchCard(w, load))
        : el('p', { class: 'muted' }, 'No watch yet. Make one below, or from a narrative’s page (“Tell me when this moves”).'),
    );
    const wanted = decodeURIComponent(location.hash.slice(1));
    const open = wanted ? document.getElementById(wanted) : null;
    if (open instanceof HTMLDetailsElement) open.open = true;
  }
  fill(
    main,
    el('h1', {}, 'Alerts'),
    el(
      'p',
      { class: 'small muted' },
      'Watches are checked after each new generation; what fired is POSTed to the watch’s webhook, signed (docs/api.md, “Alerts”). Free.',
    ),
    list,
    el('h2', {}, 'New watch'),
    watchForm({ target: null, windows: ['7d', '30d'], onMade: () => void load() }),
  );
  await load();
});
