// One shape for every error answer: JSON `{error, request_id}` with content-type application/json
// (docs/api.md, "Errors"). Most errors are thrown as HttpError and shaped where they are caught;
// this mends the ones other parts write themselves: the router's 405 and 501 (text, with Allow),
// a body some part set without a request id. A method no route knows is a 405 too, not a 501.
import { STATUS_CODES } from 'node:http';
import type Koa from 'koa';

/** False when the path has a percent-escape that does not decode (e.g. `%ZZ`, a lone `%E0`). */
export function decodablePath(p: string): boolean {
  if (!p.includes('%')) return true;
  try {
    decodeURIComponent(p);
    return true;
  } catch {
    return false;
  }
}

function messageFor(ctx: Koa.Context): string {
  const allow = ctx.response.get('Allow');
  if (ctx.status === 405) return `method ${ctx.method} is not allowed on ${ctx.path}${allow ? ` (allowed: ${allow})` : ''}`;
  if (ctx.status === 404 && !ctx.response.get('Allow')) return `no route ${ctx.method} ${ctx.path}`;
  const text = typeof ctx.body === 'string' ? ctx.body.trim() : '';
  return text || (STATUS_CODES[ctx.status] ?? `HTTP ${ctx.status}`).toLowerCase();
}

/** Make the error answer of `ctx` the JSON shape, keeping its status and headers. */
export function errorShape(ctx: Koa.Context, requestId: string): void {
  // The router answers a method it has never heard of (TRACE, PROPFIND) with 501; on a path that
  // exists, with its methods known, that is the caller's mistake like any other: 405 with Allow.
  // Off every route there is no method to offer: the path is unknown, a 404.
  if (ctx.status === 501) ctx.status = ctx.response.get('Allow') ? 405 : 404;
  const body = ctx.body as unknown;
  if (body !== null && typeof body === 'object' && !Buffer.isBuffer(body) && !('pipe' in (body as object))) {
    const o = body as Record<string, unknown>;
    if (typeof o.error === 'string' && o.request_id === requestId) return;
    ctx.body = { ...o, error: typeof o.error === 'string' ? o.error : messageFor(ctx), request_id: requestId };
  } else {
    const status = ctx.status;
    ctx.body = { error: messageFor(ctx), request_id: requestId };
    ctx.status = status; // setting a body can turn an empty-bodied status into 200
  }
  ctx.type = 'application/json';
}
