// Requests by route and status, and their latency, for /metrics. The route label is the route's
// template as the router knows it (`/narratives/:id`), never the raw path: the label set stays
// bounded whatever callers send, and no id or key ever becomes a label. Cheap per request: a
// walk over the few layers the router matched, one counter and one histogram update.
import type Koa from 'koa';
import { Counter, Histogram, type Registry } from 'prom-client';

/** Seconds: a cached search answers in about a millisecond, a search over budget hands over at SEARCH_BUDGET_MS (2 s). */
const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

interface MatchedLayer {
  path: string | RegExp;
  methods: string[];
}

/**
 * The template of the route that answered (or would have, for a 403 before it ran): the first
 * route layer the router matched for this method, as the router dispatches to the first (a route
 * does not pass on: /narratives/trending answers before /narratives/:id); else the first for any
 * method (a 405); else "unmatched". The service prefix is cut off, so the labels read like
 * docs/api.md's paths.
 */
function routeOf(ctx: Koa.Context, prefix: string): string {
  const layers = (ctx as unknown as { matched?: MatchedLayer[] }).matched ?? [];
  let any: MatchedLayer | undefined;
  for (const l of layers) {
    if (l.methods.length === 0) continue;
    if (l.methods.includes(ctx.method)) return template(l, prefix);
    any ??= l;
  }
  return any ? template(any, prefix) : 'unmatched';
}

function template(l: MatchedLayer, prefix: string): string {
  const p = String(l.path);
  return prefix && p.startsWith(prefix) ? p.slice(prefix.length) || '/' : p;
}

/** The outermost middleware: it sees the final status, after the errors were answered. `unmetered`: the scrape's own path. */
export function httpMetrics(registry: Registry, prefix: string, unmetered: string): Koa.Middleware {
  const requests = new Counter({
    name: 'ci_http_requests_total',
    help: 'HTTP requests answered, by method, route template and status',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'ci_http_request_duration_seconds',
    help: 'Time from a request reaching the app to its answer being ready, by method and route template',
    labelNames: ['method', 'route'] as const,
    buckets: LATENCY_BUCKETS,
    registers: [registry],
  });
  return async (ctx, next) => {
    if (ctx.path === unmetered) return next();
    const t0 = performance.now();
    try {
      await next();
    } finally {
      const method = METHODS.has(ctx.method) ? ctx.method : 'other';
      const route = routeOf(ctx, prefix);
      requests.inc({ method, route, status: ctx.status });
      duration.observe({ method, route }, (performance.now() - t0) / 1000);
    }
  };
}
