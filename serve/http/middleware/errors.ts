// Errors as JSON (docs/api.md, "Errors"): whatever a part throws or writes as an error becomes
// `{error, request_id}`; a 5xx is logged with its stack and answered without it.
import type Koa from 'koa';
import type { Logger } from '../../../core/infra/log.ts';
import type { RequestState } from '../app-state.ts';
import { decodablePath, errorShape } from '../error-shape.ts';
import { HttpError } from '../http-error.ts';
import { closeIfBodyUnread } from '../unread-body.ts';

/** An http-errors 4xx (Koa's ctx.throw): its message was written for the client. */
function isClientError(err: unknown): err is { status: number; message: string } {
  const e = err as { status?: unknown; expose?: unknown };
  return typeof e?.status === 'number' && e.status >= 400 && e.status < 500 && e.expose === true;
}

function answerError(ctx: Koa.ParameterizedContext<RequestState>, err: unknown, log: Logger): void {
  const requestId = ctx.state.requestId;
  if (err instanceof HttpError) {
    ctx.status = err.status;
    ctx.set(err.headers);
    ctx.body = { ...err.body, request_id: requestId };
  } else if (isClientError(err)) {
    // ctx.throw(4xx) from a part that does not know HttpError (a body parser, the admin router).
    ctx.status = err.status;
    ctx.body = { error: err.message, request_id: requestId };
  } else {
    ctx.status = 500;
    ctx.body = { error: 'internal error; quote the request_id when contacting support', request_id: requestId };
    log.error({ requestId, err: (err as Error).stack ?? String(err) }, 'request failed');
  }
}

export function jsonErrors(log: Logger): Koa.Middleware<RequestState> {
  return async (ctx, next) => {
    try {
      if (!decodablePath(ctx.path)) throw new HttpError(400, { error: 'the request path has a malformed percent-encoding' });
      await next();
      if (ctx.status === 404 && ctx.body === undefined) throw new HttpError(404, { error: `no route ${ctx.method} ${ctx.path}` });
    } catch (err) {
      answerError(ctx, err, log);
    }
    // Errors answered by parts that write text or nothing (405, 501 from the router) get the one shape.
    if (ctx.status >= 400 && ctx.respond !== false) {
      errorShape(ctx, ctx.state.requestId);
      closeIfBodyUnread(ctx);
    }
  };
}
