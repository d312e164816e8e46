// Every page's frame: the navigation, the key prompt (asked once per tab), the error box, and the
// ready mark tests and benches wait for (body[data-ready], and the time it took in data-ready-ms).
import { ApiError, call, key } from './api.js';
import { el, fill } from './dom.js';

const PAGES = [
  ['index.html', 'Narratives'],
  ['themes.html', 'Themes'],
  ['patterns.html', 'Patterns'],
  ['search.html', 'Search'],
  ['alerts.html', 'Alerts'],
  ['account.html', 'Account'],
  ['health.html', 'Health'],
];

function header(current) {
  const forget = el(
    'button',
    {
      type: 'button',
      class: 'link-button',
      on: {
        click: () => {
          key.clear();
          location.reload();
        },
      },
    },
    'Forget key',
  );
  return el(
    'header',
    { class: 'top' },
    el('a', { class: 'brand', href: 'index.html' }, 'Content intelligence'),
    el(
      'nav',
      {},
      PAGES.map(([href, label]) => el('a', { href, class: href === current ? 'active' : null }, label)),
    ),
    key.get() ? forget : null,
  );
}

/** The key prompt: checked against /health before it is kept. */
function keyGate(main, onKey) {
  const input = el('input', {
    type: 'password',
    name: 'api-key',
    autocomplete: 'off',
    required: true,
    placeholder: 'x-api-key',
    id: 'api-key',
  });
  const problem = el('p', { class: 'error', role: 'alert' });
  const form = el(
    'form',
    { class: 'card key-gate' },
    el('h1', {}, 'API key'),
    el(
      'p',
      {},
      'Paste an API key (the demo key is printed by npm start and saved in DATA_DIR/demo-key.json). ',
      'It is kept in this tab only (sessionStorage) and sent in the x-api-key header.',
    ),
    el('label', { for: 'api-key' }, 'Key'),
    input,
    el('button', { type: 'submit' }, 'Use this key'),
    problem,
  );
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    const k = input.value.trim();
    try {
      await call('/health', { apiKey: k });
      key.set(k);
      onKey();
    } catch (err) {
      fill(
        problem,
        err instanceof ApiError && err.status === 403
          ? 'That key is not known (403).'
          : `Could not check the key: ${err instanceof Error ? err.message : String(err)}`,
      );
    }
  });
  fill(main, form);
  document.body.dataset.ready = 'key';
  input.focus();
}

export function showError(node, err) {
  const what = err instanceof ApiError ? `${err.status}: ${err.message}` : String(err?.message ?? err);
  node.append(el('p', { class: 'error', role: 'alert' }, what));
}

/**
 * Run a page: `render(main)` draws it (awaiting its first data); the page is marked ready when it
 * resolves, or shows the error.
 */
export function startPage(current, render) {
  const main = el('main', { id: 'main' });
  const run = async () => {
    document.body.replaceChildren(header(current), main);
    fill(main);
    try {
      await render(main);
      // Since the navigation started: the page's HTML, scripts, API reads and drawing.
      document.body.dataset.readyMs = String(Math.round(performance.now()));
      document.body.dataset.ready = 'true';
    } catch (err) {
      if (err instanceof ApiError && err.status === 403) {
        key.clear();
        keyGate(main, run);
        return;
      }
      showError(main, err);
      document.body.dataset.ready = 'error';
    }
  };
  if (key.get()) void run();
  else {
    document.body.replaceChildren(header(current), main);
    keyGate(main, run);
  }
}

/** A labelled select whose change calls `onChange(value)`. */
export function select(label, name, options, value, onChange) {
  const s = el(
    'select',
    { name, id: `sel-${name}`, on: { change: () => onChange(s.value) } },
    options.map(([v, text]) => el('option', { value: v, selected: v === value }, text)),
  );
  return el('label', { class: 'control', for: `sel-${name}` }, `${label} `, s);
}

/** The page's parameters in its URL (never the key), updated without a reload. */
export function pageParams() {
  return new URLSearchParams(location.search);
}

export function setPageParams(params) {
  const u = new URL(location.href);
  for (const [k, v] of Object.entries(params)) {
    if (v === null || v === undefined || v === '') u.searchParams.delete(k);
    else u.searchParams.set(k, String(v));
  }
  history.replaceState(null, '', u);
}

export const WINDOWS = [
  ['7d', 'last 7 days'],
  ['30d', 'last 30 days'],
  ['90d', 'last 90 days'],
  ['all', 'all time'],
];

/**
 * A list read page by page into `list`, with its More button. `fetchPage(next)` reads the first
 * page (next null) or the one `next` names and answers {nodes, next}: the nodes to show, and what
 * names the page after (null on the last). `load()` starts again from the first page, with the
 * page's parameters (`state`) written into its URL.
 */
export function pagedList(list, state, fetchPage) {
  const more = el('button', { type: 'button', class: 'secondary', id: 'more' }, 'More');
  let next = null;
  async function load(append = false) {
    setPageParams(state);
    more.disabled = true;
    try {
      const page = await fetchPage(append ? next : null);
      if (append) list.append(...page.nodes);
      else fill(list, page.nodes);
      next = page.next;
    } catch (err) {
      showError(list, err);
      next = null;
    }
    more.hidden = more.disabled = next === null;
  }
  more.addEventListener('click', () => void load(true));
  return { load, more };
}
