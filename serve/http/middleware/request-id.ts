// Every request gets an id, on ctx.state for the log and the error bodies, and in X-Request-Id.
import { randomBytes } from 'node:crypto';
import type Koa from 'koa';
import type { RequestState } from '../app-state.ts';

const newRequestId = () => `req_${randomBytes(9).toString('base64url')}`;

export const requestId: Koa.Middleware<RequestState> = async (ctx, next) => {
  const id = newRequestId();
  ctx.state.requestId = id;
  ctx.set('X-Request-Id', id);
  await next();
};
