// Account: balance, open holds and what is available, and the usage ledger newest first, paged by
// its cursor. The price a search holds is read from /billing/prices, the server's one price table.
import { get, qs } from './api.js';
import { dataTable, el, fill, fmt } from './dom.js';
import { startPage } from './layout.js';

const PAGE = 25;
const stat = (k, v, id) => el('div', { class: 'stat' }, el('div', { class: 'v', id }, v), el('div', { class: 'k' }, k));

function entryRow(e) {
  return el(
    'tr',
    {},
    el('td', {}, fmt.dateTime(e.at)),
    el('td', {}, e.type),
    el('td', { class: 'text' }, e.what ?? e.reason ?? ''),
    el('td', { class: 'n' }, fmt.credits(e.credits)),
    el('td', { class: 'n hide-narrow' }, fmt.credits(e.held)),
    el('td', { class: 'n hide-narrow' }, fmt.credits(e.released)),
    el('td', { class: 'n' }, fmt.credits(e.balanceAfter)),
  );
}

startPage('account.html', async (main) => {
  const body = el('tbody', { id: 'usage' });
  const older = el('button', { type: 'button', class: 'secondary', id: 'older' }, 'Older');
  const newest = el('button', { type: 'button', class: 'secondary', id: 'newest' }, 'Newest');
  const pageInfo = el('span', { class: 'muted small' });
  const stats = el('div', { class: 'stats' });
  let page = 0;
  const cursors = [undefined];
  const prices = await get('/billing/prices');

  async function load() {
    const u = await get(`/usage${qs({ limit: PAGE, cursor: cursors[page] })}`);
    fill(
      stats,
      stat('balance', fmt.credits(u.balance), 'balance'),
      stat('held by running calls', fmt.credits(u.held), 'held'),
      stat('available', fmt.credits(u.available), 'available'),
      stat('account', u.account),
    );
    fill(body, u.entries.length ? u.entries.map(entryRow) : el('tr', {}, el('td', { colspan: 7, class: 'muted' }, 'no entries')));
    cursors[page + 1] = u.nextCursor ?? undefined;
    older.disabled = !u.nextCursor;
    newest.disabled = page === 0;
    fill(pageInfo, `page ${page + 1}`);
  }
  older.addEventListener('click', () => {
    page++;
    void load();
  });
  newest.addEventListener('click', () => {
    page = 0;
    void load();
  });
  fill(
    main,
    el('h1', {}, 'Account'),
    stats,
    el('h2', {}, 'Usage'),
    el(
      'p',
      { class: 'small muted' },
      `Top-ups, settlements and refunds, newest first. A search holds limit × ${prices.search.per_record} credits, ` +
        'then settles to the rows it returned and releases the rest.',
    ),
    dataTable(
      [['when'], ['type'], ['what'], ['credits', 'n'], ['held', 'n hide-narrow'], ['released', 'n hide-narrow'], ['balance after', 'n']],
      body,
      'table-wrap card',
    ),
    el('div', { class: 'pager' }, newest, older, pageInfo),
  );
  await load();
});
