// DOM building without markup: every text a post, a narrative or a pattern carries is untrusted
// (anyone can post "<script>"), so nothing here parses HTML. el() sets text with textContent and
// attributes one by one; links pass safeHref first.

/**
 * An element with attributes and children. Children are nodes or text (numbers and strings become
 * text nodes); null and false are skipped. `on*` attributes are refused: handlers go through `on`.
 */
export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === null || v === undefined || v === false) continue;
    if (k === 'on') for (const [type, fn] of Object.entries(v)) node.addEventListener(type, fn);
    else if (k === 'class') node.className = v;
    else if (k === 'dataset') Object.assign(node.dataset, v);
    else if (/^on/i.test(k)) throw new Error(`el: event attribute ${k} refused`);
    else if (k === 'href') node.setAttribute('href', safeHref(v));
    else node.setAttribute(k, v === true ? '' : String(v));
  }
  append(node, children);
  return node;
}

function append(node, children) {
  for (const c of children.flat(Infinity)) {
    if (c === null || c === undefined || c === false) continue;
    node.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
}

/** Replace a node's children. */
export function fill(node, ...children) {
  node.replaceChildren();
  append(node, children);
  return node;
}

/** A link target that cannot run script: http(s) URLs and our own relative pages; anything else '#'. */
function safeHref(url) {
  const s = String(url ?? '');
  if (/^[a-z0-9_-]+\.html(\?[^#]*)?$/i.test(s)) return s;
  try {
    const u = new URL(s);
    return u.protocol === 'https:' || u.protocol === 'http:' ? u.href : '#';
  } catch {
    return '#';
  }
}

/** An outside link: opens in a new tab without giving it this page. */
export function outLink(url, text) {
  const href = safeHref(url);
  if (href === '#') return el('span', { class: 'muted' }, text);
  return el('a', { href, target: '_blank', rel: 'noopener noreferrer nofollow' }, text);
}

const intFmt = new Intl.NumberFormat('en-US');
const compactFmt = new Intl.NumberFormat('en-US', { notation: 'compact', maximumFractionDigits: 1 });

export const fmt = {
  int: (n) => (n === null || n === undefined ? '–' : intFmt.format(Number(n))),
  compact: (n) => (n === null || n === undefined ? '–' : compactFmt.format(Number(n))),
  num: (n, d = 2) => (n === null || n === undefined ? '–' : Number(n).toFixed(d)),
  pct: (x, d = 0) => (x === null || x === undefined ? '–' : `${(x * 100).toFixed(d)}%`),
  signedPct: (x) => (x === null || x === undefined ? 'new' : `${x >= 0 ? '+' : '−'}${Math.abs(x * 100).toFixed(0)}%`),
  credits: (c) => (c === null || c === undefined ? '–' : Number(c).toLocaleString('en-US', { maximumFractionDigits: 6 })),
  /** The word for a count: 'credit' for exactly 1, else 'credits' (1 credit, 0.5 credits, 2 credits). */
  unit: (n, one, many = `${one}s`) => (Number(n) === 1 ? one : many),
  date: (iso) => (iso ? new Date(iso).toISOString().slice(0, 10) : '–'),
  dateTime: (iso) => (iso ? new Date(iso).toISOString().replace('T', ' ').slice(0, 16) + ' UTC' : '–'),
  age: (seconds) => {
    if (seconds === null || seconds === undefined) return '–';
    const s = Math.round(seconds);
    if (s < 120) return `${s} s`;
    if (s < 7200) return `${Math.round(s / 60)} min`;
    if (s < 172800) return `${(s / 3600).toFixed(1)} h`;
    return `${(s / 86400).toFixed(1)} days`;
  },
};

/** Why a narrative has no lifecycle (docs/fields.md: null for a window under 14 days). */
export const NO_LIFECYCLE = 'no lifecycle: the shape of a story needs a window of 14 days or more (see its 30d narrative)';

/** A lifecycle badge (emerging, growing, peaking, declining, dormant, steady); nothing without one (a 7-day window). */
export function lifecycleBadge(lifecycle) {
  return lifecycle ? el('span', { class: `badge lc-${lifecycle}`, title: 'lifecycle (docs/fields.md)' }, lifecycle) : null;
}

/** A sentiment badge: label and score. */
export function sentimentBadge(label, score) {
  return el(
    'span',
    { class: `badge sent-${label ?? 'none'}`, title: 'sentiment_score = (positive - negative) / posts with a tone' },
    label ?? 'no tone',
    score === null || score === undefined ? null : ` ${score >= 0 ? '+' : ''}${score.toFixed(2)}`,
  );
}

export function chips(values, cls = 'chip') {
  return el(
    'span',
    { class: 'chips' },
    values.map((v) => el('span', { class: cls }, v)),
  );
}

/** A horizontal share bar (0..1): its width set through the CSSOM, which the CSP allows. */
export function shareBar(share, cls = '') {
  const inner = el('span', { class: `bar-fill ${cls}` });
  inner.style.width = `${Math.max(0, Math.min(1, share)) * 100}%`;
  return el('span', { class: 'bar' }, inner);
}

/**
 * A table in its scrolling wrapper: `head` as [text, class?] pairs, `body` its tbody (kept by the
 * caller when it fills it again later).
 * @param {Array<[string, string?]>} head
 * @param {HTMLElement} body
 */
export function dataTable(head, body, wrapClass = 'table-wrap') {
  return el(
    'div',
    { class: wrapClass },
    el(
      'table',
      {},
      el(
        'thead',
        {},
        el(
          'tr',
          {},
          head.map(([t, cls]) => el('th', { class: cls ?? null }, t)),
        ),
      ),
      body,
    ),
  );
}
