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
 * any other error becomes an ApiError carrying the server's JSON body. `raw`: the Response itself.
 * @param {string} path under {base_url}
 * @param {{method?: string, body?: unknown, headers?: Record<string, string>, raw?: boolean, apiKey?: string | null, cache?: RequestCache}} [options]
 * @returns {Promise<any>} {json, headers, status}, or the Response with `raw`
 */
export async function call(path, { method = 'GET', body, headers = {}, raw = false, apiKey = key.get(), cache = 'no-store' } = {}) {
  for (let attempt = 0; ; attempt++) {
    const res = await fetch(`${BASE}${path}`, {
      method,
      headers: { 'x-api-key': apiKey ?? '', ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
      cache,
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

/** @type {(path: string) => Promise<any>} the JSON of a GET */
export const get = async (path) => (await call(path)).json;

/** A query string from an object, empty values left out. */
export function qs(params) {
  const p = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null && v !== '') p.set(k, String(v));
  const s = p.toString();
  return s ? `?${s}` : '';
}

const thumbs = new Map();
/** At most this many posts in one GET /media (the server's MEDIA_BATCH_MAX). */
const MEDIA_BATCH = 100;

async function thumbnailFrom(media) {
  const local = media?.find((m) => m.thumbnail);
  if (local) {
    // Thumbnails may come from the browser's cache (the server marks them private, a day).
    const res = await call(local.thumbnail, { raw: true, cache: 'default' });
    return { src: URL.createObjectURL(await res.blob()) };
  }
  const remote = media?.find((m) => m.url);
  return remote ? { remote: remote.url } : null;
}

/**
 * Posts' first media with a thumbnail, by uuid: a promise each of an object URL (the thumbnail is
 * fetched with the key: an <img src> cannot send it), or {remote: url} for media hosted elsewhere,
 * or null. The media lists come in one read per hundred posts (GET /media?uuids=...), so a post
 * without a servable file costs no failed request. Kept for the page's life.
 */
export function thumbnailsOf(uuids) {
  const wanted = [...new Set(uuids)].filter((u) => !thumbs.has(u));
  for (let i = 0; i < wanted.length; i += MEDIA_BATCH) {
    const batch = wanted.slice(i, i + MEDIA_BATCH);
    const listed = get(`/media${qs({ uuids: batch.join(',') })}`).then((r) => new Map(r.items.map((x) => [x.uuid, x.media])));
    for (const uuid of batch)
      thumbs.set(
        uuid,
        listed.then((m) => thumbnailFrom(m.get(uuid))).catch(() => null),
      );
  }
  return new Map(uuids.map((u) => [u, thumbs.get(u)]));
}
