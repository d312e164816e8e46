// Health: what the server serves (generation, as-of, data age), the ledger and the search workers.
import { get } from './api.js';
import { el, fill, fmt } from './dom.js';
import { startPage } from './layout.js';

const row = (k, v) => el('tr', {}, el('th', {}, k), el('td', {}, v));

startPage('health.html', async (main) => {
  const h = await get('/health');
  const fresh = h.data_age_seconds < 2 * 3600;
  fill(
    main,
    el('h1', {}, 'Health'),
    el(
      'div',
      { class: 'stats' },
      el('div', { class: 'stat' }, el('div', { class: 'v', id: 'status' }, h.status), el('div', { class: 'k' }, 'status')),
      el(
        'div',
        { class: 'stat' },
        el('div', { class: 'v', id: 'generation' }, h.generation),
        el('div', { class: 'k' }, 'generation served'),
      ),
      el(
        'div',
        { class: 'stat', title: 'time since the as-of instant of the served data' },
        el('div', { class: `v ${fresh ? '' : 'change-down'}`, id: 'data-age' }, fmt.age(h.data_age_seconds)),
        el('div', { class: 'k' }, 'data age'),
      ),
      el('div', { class: 'stat' }, el('div', { class: 'v' }, fmt.int(h.rows)), el('div', { class: 'k' }, 'posts served')),
    ),
    el(
      'div',
      { class: 'card table-wrap' },
      el(
        'table',
        { id: 'health' },
        el(
          'tbody',
          {},
          row('data as of', fmt.dateTime(h.as_of)),
          row('computed at', fmt.dateTime(h.computed_at)),
          row('loaded at', fmt.dateTime(h.loaded_at)),
          row('narratives', fmt.int(h.narratives)),
          row('patterns', fmt.int(h.patterns)),
          row('platforms', (h.platforms ?? []).join(', ')),
          row('generations draining', fmt.int(h.draining_generations)),
          row('last load error', h.last_load_error ?? 'none'),
          row('ledger', `${h.ledger.backend}; ${fmt.int(h.ledger.open_holds)} open holds; last seq ${h.ledger.last_seq}`),
          row(
            'search',
            `${h.search.answer_workers} answer workers; cache ${fmt.int(h.search.answer_cache.entries)} answers, ${fmt.int(h.search.answer_cache.hits)} hits`,
          ),
          row('uptime', fmt.age(h.uptime_seconds)),
        ),
      ),
    ),
  );
});
