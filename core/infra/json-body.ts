// The routes that take a JSON body (POST /search, POST /intelligence/jobs, /mcp, the ledger's admin
// endpoint) refuse a body sent as anything but application/json with a 415 that says so. Without it
// the body parser skips such a body and the route sees none: `curl -d '{"query":"x"}'` (curl -d
// sends application/x-www-form-urlencoded) was told "query is required". Here, not in serve/, since
// the ledger's admin endpoint needs the same rule and the ledger stands on core/ alone.
import type { IncomingMessage } from 'node:http';
import type Koa from 'koa';

/** A body is on its way: chunked, or a Content-Length above 0 (an empty POST has no type to check). */
function hasBody(req: IncomingMessage): boolean {
  return req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length']) > 0;
}

/** What the 415 says: the type the body must have, the one it had, and curl's fix when curl -d sent it. */
function jsonBodyRequired(contentType: string | undefined): string {
  const had = contentType ? `Content-Type ${contentType.slice(0, 100)}` : 'no Content-Type';
  const curl = /^application\/x-www-form-urlencoded/i.test(contentType ?? '')
    ? ", which curl -d sends: add -H 'content-type: application/json'"
    : '';
  return `the request body must be JSON sent with Content-Type: application/json (this one has ${had}${curl})`;
}

/** Koa middleware for a POST route whose body is JSON: 415 before the handler when the body is another type. */
export const requireJsonBody: Koa.Middleware = async (ctx, next) => {
  if (ctx.method === 'POST' && hasBody(ctx.req) && !ctx.request.is('application/json'))
    ctx.throw(415, jsonBodyRequired(ctx.get('content-type') || undefined));
  await next();
};
