// Search: the billed POST /search. Before it runs, the page shows its hold (limit x the price per
// record, from /billing/prices) against the available balance; after, the charge and the balance
// from the answer's billing headers, the ranked rows with each score explained (docs/fields.md),
// and the narratives and creators of the answer.
import { ApiError, call, get } from './api.js';
import { el, fill, fmt, outLink, shareBar } from './dom.js';
import { pageParams, select, setPageParams, startPage, WINDOWS } from './layout.js';

/** The scores of a content item, as docs/fields.md defines them. */
const SCORES = [
  ['exampleRankingScore', 'rank score', '0.70 · relevance + 0.15 · recency + 0.15 · engagement: the sort key'],
  ['relevance', 'relevance', 'rrfScore / (2/61): 1 = ranked first by both the lexical (BM25) and the semantic retriever'],
  ['similarity', 'similarity', 'cosine of the query and the post embeddings (0 when negative)'],
  ['recencyScore', 'recency', '0.5 ^ (age in days / half-life); half-life = window / 3'],
  ['engagementScore', 'engagement', 'ln(1 + likes + 2·comments + 3·shares), scaled by the corpus maximum'],
  ['authorReach', 'reach', 'ln(1 + followers), scaled by the corpus maximum'],
];

function scoresLegend() {
  return el(
    'details',
    { class: 'small' },
    el('summary', {}, 'What the scores mean'),
    el(
      'ul',
      {},
      SCORES.map(([, name, what]) => el('li', {}, el('b', {}, name), `: ${what}`)),
      el('li', {}, el('b', {}, 'rrfScore'), ': Σ 1 / (60 + rank) over the retrievers that found the post'),
    ),
  );
}

function resultRow(item, i) {
  return el(
    'tr',
    {},
    el('td', { class: 'n' }, String(i + 1)),
    el(
      'td',
      { class: 'text' },
      el('b', {}, item.title ?? ''),
      item.title && item.description ? ' — ' : '',
      (item.description ?? '').slice(0, 280),
      el(
        'div',
        { class: 'figures' },
        el('span', {}, item.platform ?? '–'),
        el('span', {}, fmt.date(item.publishedAt)),
        el('span', {}, `${fmt.int(item.likeCount)} likes`),
        item.narrativeIds.length ? el('span', {}, `${item.narrativeIds.length} narratives`) : null,
      ),
    ),
    SCORES.map(([k, name, what]) =>
      el(
        'td',
        { class: `score-cell ${k === 'exampleRankingScore' ? '' : 'hide-narrow'}`, title: `${name}: ${what}` },
        fmt.num(item[k], 3),
        shareBar(item[k] ?? 0),
      ),
    ),
  );
}

/** A search over the synchronous budget: handed to an asynchronous job, its hold released (docs/jobs.md). */
const handedToJob = (json) =>
  el(
    'p',
    { class: 'card', id: 'handed' },
    `The search ran long and was handed to job ${json.jobId} (${json.status}); nothing was charged here.`,
  );

/** What the search cost: the charge, the hold it came from, and the balance before and after. */
function chargeCard(a, perRecord, bill) {
  const { charged, held, before, after } = bill;
  return el(
    'div',
    { class: 'card billing', id: 'charge' },
    el('span', {}, 'Charged: ', el('span', { class: 'v', id: 'charged' }, fmt.credits(charged)), ` ${fmt.unit(charged, 'credit')}`),
    el('span', { class: 'muted small' }, `${a.content.length} rows × ${perRecord}; held ${fmt.credits(held)}, released the rest`),
    el(
      'span',
      {},
      'Available: ',
      el('span', { class: 'v' }, fmt.credits(before)),
      ' → ',
      el('span', { class: 'v', id: 'available-after' }, fmt.credits(after)),
    ),
    el('span', { class: 'muted small' }, `${a.response_time_ms} ms · ${a.request_id}`),
  );
}

/** The answer's narratives, linked to their pages. */
function answerNarratives(a) {
  return [
    el('h2', {}, `Narratives of the answer (${a.narratives.length})`),
    el(
      'ul',
      { id: 'answer-narratives' },
      a.narratives.map((n) =>
        el(
          'li',
          {},
          el('a', { href: `narrative.html?id=${encodeURIComponent(n.id)}` }, n.label),
          el('span', { class: 'muted small' }, ` ${n.source} · ${fmt.int(n.content_count)} posts`),
        ),
      ),
    ),
  ];
}

function answerCreators(a) {
  return [
    el('h2', {}, `Creators (${a.creators.length})`),
    el(
      'p',
      { id: 'answer-creators', class: 'small' },
      a.creators
        .slice(0, 15)
        .map(
          (c) =>
            `${c.creatorHandle ? `@${c.creatorHandle}` : `creator ${c.creatorId}`} (${c.platform}, ${c.hits} ${fmt.unit(c.hits, 'row')})`,
        )
        .join(' · ') || 'none',
    ),
  ];
}

/** The ranked rows with their scores. */
function answerRows(a) {
  return [
    el('h2', {}, `Rows (${a.content.length})`),
    scoresLegend(),
    el(
      'div',
      { class: 'table-wrap' },
      el(
        'table',
        { id: 'rows' },
        el(
          'thead',
          {},
          el(
            'tr',
            {},
            el('th', { class: 'n' }, '#'),
            el('th', {}, 'post'),
            SCORES.map(([k, name]) => el('th', { class: k === 'exampleRankingScore' ? '' : 'hide-narrow' }, name)),
          ),
        ),
        el('tbody', {}, a.content.map(resultRow)),
      ),
    ),
  ];
}

/** A refused or failed search: its message, and for a 402 what the balance covers and where to top up. */
function failure(err) {
  const b = err instanceof ApiError ? err.body : null;
  return [
    el('p', { class: 'error', role: 'alert' }, err instanceof Error ? err.message : String(err)),
    b?.credits_required !== undefined
      ? el(
          'p',
          {},
          `Needs ${fmt.credits(b.credits_required)}, available ${fmt.credits(b.credits_available)}; ` +
            `the largest limit it covers: ${b.recommendations.maxLimitForWindow}. `,
          outLink(b.recommendations.topUpUrl, 'how to top up'),
        )
      : null,
  ];
}

/** The hold a search of `limit` places, against the available balance, shown before it runs. */
function holdView(h, perRecord, available) {
  return [
    el('span', {}, 'Hold before it runs: ', el('span', { class: 'v', id: 'hold-credits' }, fmt.credits(h)), ` ${fmt.unit(h, 'credit')}`),
    el('span', { class: 'muted small' }, `= limit × ${perRecord} credits a record; the rest is released after`),
    el('span', {}, 'Available: ', el('span', { class: 'v', id: 'available' }, fmt.credits(available))),
    h > available ? el('span', { class: 'error' }, 'more than the available balance: the search would be refused (402)') : null,
  ];
}

startPage('search.html', async (main) => {
  const params = pageParams();
  const [prices, usage] = await Promise.all([get('/billing/prices'), get('/usage?limit=1')]);
  const perRecord = prices.search.per_record;
  let available = usage.available;
  const query = el('input', { type: 'search', id: 'query', name: 'query', required: true, maxlength: 1000, value: params.get('q') ?? '' });
  const limit = el('input', {
    type: 'number',
    id: 'limit',
    name: 'limit',
    min: 1,
    max: prices.search.max_limit,
    value: params.get('limit') ?? String(prices.search.default_limit),
  });
  let windowKey = params.get('window') ?? '30d';
  const hold = el('div', { class: 'billing', id: 'hold' });
  const outcome = el('div', { id: 'outcome' });
  const run = el('button', { type: 'submit', id: 'run' }, 'Search');

  const holdCredits = () => Math.round(Math.max(0, Number(limit.value) || 0) * perRecord * 1e6) / 1e6;
  const showHold = () => fill(hold, ...holdView(holdCredits(), perRecord, available));
  limit.addEventListener('input', showHold);

  const form = el(
    'form',
    { class: 'card', id: 'search-form' },
    el(
      'div',
      { class: 'controls' },
      el('label', { class: 'control', for: 'query' }, 'Query', query),
      select('Window', 'window', WINDOWS, windowKey, (v) => (windowKey = v)),
      el('label', { class: 'control', for: 'limit' }, `Limit (1–${prices.search.max_limit})`, limit),
      run,
    ),
    hold,
  );
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    const body = { query: query.value, limit: Number(limit.value), window: windowKey };
    setPageParams({ q: body.query, limit: body.limit, window: body.window });
    run.disabled = true;
    fill(outcome, el('p', { class: 'muted' }, 'searching…'));
    const before = available;
    try {
      const r = await call('/search', { method: 'POST', body });
      if (r.status === 202) {
        fill(outcome, handedToJob(r.json));
        run.disabled = false;
        return;
      }
      const charged = Number(r.headers.get('x-service-credits-used'));
      available = Number(r.headers.get('x-service-credits-remaining'));
      const a = r.json;
      const bill = { charged, held: holdCredits(), before, after: available };
      fill(outcome, chargeCard(a, perRecord, bill), ...answerNarratives(a), ...answerCreators(a), ...answerRows(a));
    } catch (err) {
      fill(outcome, ...failure(err));
    }
    run.disabled = false;
    showHold();
  });
  showHold();
  fill(main, el('h1', {}, 'Search'), form, outcome);
});
