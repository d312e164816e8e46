// Errors as JSON (docs/api.md, "Errors"): whatever a part throws or writes as an error becomes
// `{error, request_id}`; a 5xx is logged with its stack and answered without it. The database
// out of reach (core/infra/postgres/connection-loss.ts) is no fault of the request: a 503 with
// Retry-After (docs/api.md, "During a database outage"), logged once every few seconds.
import type Koa from 'koa';
import type { Logger } from '../../../core/infra/log.ts';
import type { RequestState } from '../app-state.ts';
import { decodablePath, errorShape } from '../error-shape.ts';
import { HttpError } from '../http-error.ts';
import { closeIfBodyUnread } from '../unread-body.ts';
import { isConnectionLoss } from '../../../core/infra/postgres/connection-loss.ts';

/** Seconds a client is asked to wait before it retries a call the database's outage refused. */
const OUTAGE_RETRY_AFTER_S = 2;
/** An outage answers many requests alike: one log line per this long, with the count. */
const OUTAGE_LOG_EVERY_MS = 5_000;

/** An http-errors 4xx (Koa's ctx.throw): its message was written for the client. */
function isClientError(err: unknown): err is { status: number; message: string } {
  const e = err as { status?: unknown; expose?: unknown };
  return typeof e?.status === 'number' && e.status >= 400 && e.status < 500 && e.expose === true;
}

function answerError(ctx: Koa.ParameterizedContext<RequestState>, err: unknown, log: Logger, outage: () => void): void {
  const requestId = ctx.state.requestId;
  if (err instanceof HttpError) {
    ctx.status = err.status;
    ctx.set(err.headers);
    ctx.body = { ...err.body, request_id: requestId };
  } else if (isClientError(err)) {
    // ctx.throw(4xx) from a part that does not know HttpError (a body parser, the admin router).
    ctx.status = err.status;
    ctx.body = { error: err.message, request_id: requestId };
  } else if (isConnectionLoss(err)) {
    ctx.status = 503;
    ctx.set('Retry-After', String(OUTAGE_RETRY_AFTER_S));
    ctx.body = {
      error:
        `the database is out of reach; retry in ${OUTAGE_RETRY_AFTER_S} s ` +
        '(with the same Idempotency-Key: a charge made is answered again, never made twice)',
      request_id: requestId,
    };
    outage();
  } else {
    ctx.status = 500;
    ctx.body = { error: 'internal error; quote the request_id when contacting support', request_id: requestId };
    log.error({ requestId, err: (err as Error).stack ?? String(err) }, 'request failed');
  }
}

export function jsonErrors(log: Logger): Koa.Middleware<RequestState> {
  let refused = 0;
  let loggedAt = 0;
  const outage = () => {
    refused++;
    if (Date.now() - loggedAt < OUTAGE_LOG_EVERY_MS) return;
    log.warn({ refused }, 'the database is out of reach: requests that need it answered 503');
    loggedAt = Date.now();
    refused = 0;
  };
  return async (ctx, next) => {
    try {
      if (!decodablePath(ctx.path)) throw new HttpError(400, { error: 'the request path has a malformed percent-encoding' });
      await next();
      if (ctx.status === 404 && ctx.body === undefined) throw new HttpError(404, { error: `no route ${ctx.method} ${ctx.path}` });
    } catch (err) {
      answerError(ctx, err, log, outage);
    }
    // Errors answered by parts that write text or nothing (405, 501 from the router) get the one shape.
    if (ctx.status >= 400 && ctx.respond !== false) {
      errorShape(ctx, ctx.state.requestId);
      closeIfBodyUnread(ctx);
    }
  };
}
