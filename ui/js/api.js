// The API as the dashboard calls it: the same free reads and billed search as any client, with the
// key the person typed in. The key lives in this tab's sessionStorage only: never in a URL, a
// cookie or a log (the server logs no key either).

const KEY_ITEM = 'content-intelligence.api-key';

/** {base_url}: the path before /ui/ (the dashboard is served at {base_url}/ui/). */
export const BASE = location.pathname.slice(0, location.pathname.lastIndexOf('/ui/'));

export const key = {
  get: () => sessionStorage.getItem(KEY_ITEM),
  set: (k) => sessionStorage.setItem(KEY_ITEM, k),
  clear: () => sessionStorage.removeItem(KEY_ITEM),
};

export class ApiError extends Error {
  constructor(status, body) {
    super(body && typeof body.error === 'string' ? body.error : `HTTP ${status}`);
    this.status = status;
    this.body = body;
  }
}

const MAX_RETRIES = 3;

/**
 * One call: JSON in and out, the key in x-api-key. A 429 waits its Retry-After (at most 3 times);
 * any other error becomes an ApiError carrying the server's JSON body.
 */
export async function call(path, { method = 'GET', body, headers = {}, raw = false, apiKey = key.get() } = {}) {
  for (let attempt = 0; ; attempt++) {
    const res = await fetch(`${BASE}${path}`, {
      method,
      headers: { 'x-api-key': apiKey ?? '', ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
      cache: 'no-store',
      credentials: 'omit',
      referrerPolicy: 'no-referrer',
    });
    if (res.status === 429 && attempt < MAX_RETRIES) {
      const wait = Math.min(5, Number(res.headers.get('retry-after')) || 1);
      await new Promise((r) => setTimeout(r, wait * 1000));
      continue;
    }
    if (raw && res.ok) return res;
    const text = await res.text();
    let json = null;
    try {
      json = JSON.parse(text);
    } catch {
      json = null;
    }
    if (!res.ok) throw new ApiError(res.status, json);
    return { json, headers: res.headers, status: res.status };
  }
}

export const get = async (path) => (await call(path)).json;

/** A query string from an object, empty values left out. */
export function qs(params) {
  const p = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null && v !== '') p.set(k, String(v));
  const s = p.toString();
  return s ? `?${s}` : '';
}

const thumbs = new Map();

/**
 * A post's first media as an object URL of its thumbnail (fetched with the key: an <img src>
 * cannot send it), or {remote: url} for media hosted elsewhere, or null. Kept for the page's life.
 */
export function thumbnailOf(uuid, index = 0) {
  const id = `${uuid}/${index}`;
  if (!thumbs.has(id))
    thumbs.set(
      id,
      (async () => {
        try {
          const res = await call(`/media/${encodeURIComponent(uuid)}/${index}`, { raw: true });
          return { src: URL.createObjectURL(await res.blob()) };
        } catch (err) {
          if (err instanceof ApiError && err.body && typeof err.body.url === 'string') return { remote: err.body.url };
          return null;
        }
      })(),
    );
  return thumbs.get(id);
}
