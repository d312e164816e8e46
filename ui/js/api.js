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
 * A post's first media with a thumbnail, as an object URL (fetched with the key: an <img src>
 * cannot send it); else {remote: url} for media hosted elsewhere; else null. The media list is
 * asked first, so a post without a servable file costs no failed request. Kept for the page's life.
 */
export function thumbnailOf(uuid) {
  if (!thumbs.has(uuid))
    thumbs.set(
      uuid,
      (async () => {
        try {
          const { items } = await get(`/media/${encodeURIComponent(uuid)}`);
          const local = items.find((m) => m.thumbnail);
          if (local) return { src: URL.createObjectURL(await (await call(local.thumbnail, { raw: true })).blob()) };
          const remote = items.find((m) => m.url);
          return remote ? { remote: remote.url } : null;
        } catch {
          return null;
        }
      })(),
    );
  return thumbs.get(uuid);
}
