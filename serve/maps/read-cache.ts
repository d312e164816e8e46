// The free map reads (trending, narrative detail and trajectory, themes, patterns, the map search)
// are a function of the generation and the request's path and query: a generation never changes
// once published. So a read's encoded JSON is kept, keyed by the generation, path and query, and
// the same read answers from it: at 1M posts a narrative's detail (tens of kB of JSON built from
// its members) cost most of a read, and dashboards and clients ask for the same few pages again and
// again. Emergent narratives (ids "em-...") expire (serve/search/emergent-store.ts) and are never
// kept. Bounded by the bytes kept (READ_CACHE_MB, least recently used out first); a generation's
// reads age out once it is no longer served. lru-cache (isaacs) does the bookkeeping.
import type Koa from 'koa';
import { LRUCache } from 'lru-cache';
import type { ApiState } from '../generation/api-state.ts';

/** Paths (after the service prefix) whose GET answers are kept. */
const KEPT = /^\/(?:narratives|themes|intelligence\/patterns)(?:\/|$|\?)/;
const EMERGENT = /\/em-/;

export class ReadCache {
  private readonly lru: LRUCache<string, Buffer> | null;
  hits = 0;
  misses = 0;

  /** `maxBytes` 0: nothing kept. */
  constructor(maxBytes: number) {
    this.lru = maxBytes > 0 ? new LRUCache<string, Buffer>({ maxSize: maxBytes }) : null;
  }

  get bytes(): number {
    return this.lru?.calculatedSize ?? 0;
  }

  get entries(): number {
    return this.lru?.size ?? 0;
  }

  /**
   * The middleware, after the key check and the generation's lease (a read is answered from the
   * generation the request leased). `prefix`: the service prefix, left off the paths matched.
   */
  middleware(prefix: string): Koa.Middleware<ApiState> {
    return async (ctx, next) => {
      const lru = this.lru;
      const path = ctx.path.startsWith(prefix) ? ctx.path.slice(prefix.length) : ctx.path;
      if (!lru || ctx.method !== 'GET' || !KEPT.test(path) || EMERGENT.test(path)) return next();
      const key = `${ctx.state.gen.id}\u0000${path}\u0000${ctx.querystring}`;
      const kept = lru.get(key);
      if (kept) {
        this.hits++;
        ctx.type = 'application/json';
        ctx.body = kept;
        return;
      }
      this.misses++;
      await next();
      const body = ctx.body;
      // Only a 200 with a JSON object (an error or a stream is the request's own).
      if (ctx.status !== 200 || body === null || typeof body !== 'object' || Buffer.isBuffer(body) || !ctx.response.is('json')) return;
      const bytes = Buffer.from(JSON.stringify(body));
      lru.set(key, bytes, { size: Math.max(1, bytes.length) });
      ctx.body = bytes;
    };
  }
}
