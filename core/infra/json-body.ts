// The routes that take a JSON body (POST /search, POST /intelligence/jobs, /mcp, the ledger's admin
// endpoint) refuse a body sent as anything but application/json with a 415 that says so. Without it
// the body parser skips such a body and the route sees none: `curl -d '{"query":"x"}'` (curl -d
// sends application/x-www-form-urlencoded) was told "query is required". The rule is here, free of
// any web framework, since the ledger's admin endpoint needs it too and the ledger stands on core/
// alone; serve/http/require-json-body.ts is its Koa middleware, and the admin router calls it itself.
import type { IncomingMessage } from 'node:http';

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

/**
 * The 415's message for a POST whose body is on its way and is not JSON, or null: the request goes on.
 * `isJson` is the server's own media-type test of the request's Content-Type (Koa's
 * `ctx.request.is('application/json')`), asked only of a POST with a body.
 */
export function nonJsonBodyRefusal(req: IncomingMessage, isJson: () => boolean): string | null {
  if (req.method !== 'POST' || !hasBody(req) || isJson()) return null;
  return jsonBodyRequired(req.headers['content-type'] || undefined);
}
