// "Tell me when this moves": a form that makes a watch (POST /alerts) on one narrative's story, or
// on a query or any new narrative from the alerts page. The watch's signing secret is shown once,
// here, right after it is made (docs/api.md, "Verifying a webhook").
import { ApiError, call } from './api.js';
import { el, fill } from './dom.js';

/** A checkbox with its label. */
function check(name, label, checked) {
  const box = el('input', { type: 'checkbox', name, id: `w-${name}`, checked });
  return { box, node: el('label', { class: 'control', for: `w-${name}` }, box, ` ${label}`) };
}

/**
 * The form. `target` is fixed (a narrative's story), or null: then the form asks for words to
 * watch (a query over the narrative map; empty: any new narrative). `windows` the windows watched.
 * @param {{target: object | null, windows: string[], name?: string, onMade?: (watch: any) => void}} o
 */
export function watchForm({ target, windows, name = '', onMade }) {
  const url = el('input', { type: 'url', name: 'url', id: 'w-url', required: true, placeholder: 'https://example.com/hooks/narratives' });
  const title = el('input', { type: 'text', name: 'name', id: 'w-name', value: name, maxlength: 120 });
  const words = target ? null : el('input', { type: 'text', name: 'query', id: 'w-query', placeholder: 'words, e.g. ferry strike' });
  const spike = check('spike', 'a spike (a day far above the days before)', true);
  const lifecycle = check('lifecycle', 'a lifecycle change (emerging → growing …)', true);
  const momentum = check('momentum', 'momentum rising past', false);
  const level = el('input', { type: 'number', name: 'level', id: 'w-level', min: 0, max: 1, step: 0.05, value: 0.5 });
  const fresh = check('new_narrative', 'a new narrative', !target);
  const outcome = el('div', { class: 'watch-outcome', role: 'status' });
  const form = el(
    'form',
    { class: 'card watch-form' },
    el('label', { for: 'w-url' }, 'Webhook URL (events are POSTed there, signed)'),
    url,
    el('label', { for: 'w-name' }, 'Name (optional)'),
    title,
    words ? [el('label', { for: 'w-query' }, 'Narratives matching (empty: every narrative)'), words] : null,
    el(
      'fieldset',
      {},
      el('legend', {}, 'Tell me about'),
      spike.node,
      lifecycle.node,
      el('span', { class: 'momentum' }, momentum.node, level),
      fresh.node,
    ),
    el('button', { type: 'submit' }, 'Create the watch'),
    outcome,
  );
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    const q = words?.value.trim() ?? '';
    const conditions = {
      ...(spike.box.checked ? { spike: true } : {}),
      ...(lifecycle.box.checked ? { lifecycle: {} } : {}),
      ...(momentum.box.checked ? { momentum: { level: Number(level.value) } } : {}),
      ...(fresh.box.checked ? { new_narrative: true } : {}),
    };
    const body = {
      ...(title.value.trim() ? { name: title.value.trim() } : {}),
      target: target ?? (q ? { kind: 'query', query: q } : { kind: 'any' }),
      windows,
      conditions,
      url: url.value.trim(),
    };
    try {
      const { json } = await call('/alerts', { method: 'POST', body });
      fill(
        outcome,
        el('p', {}, 'Watch ', el('a', { href: `alerts.html#${encodeURIComponent(json.watch.id)}` }, json.watch.id), ' made.'),
        el('p', { class: 'small' }, 'Its signing secret, shown only now: keep it where your receiver verifies signatures.'),
        el('code', { class: 'secret', id: 'watch-secret' }, json.secret),
      );
      onMade?.(json.watch);
    } catch (err) {
      fill(outcome, el('p', { class: 'error', role: 'alert' }, err instanceof ApiError ? `${err.status}: ${err.message}` : String(err)));
    }
  });
  return form;
}
