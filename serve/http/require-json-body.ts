// The Koa middleware of core/infra/json-body.ts's rule: a POST route whose body is JSON answers 415
// before its handler when the body is of another type.
import type Koa from 'koa';
import { nonJsonBodyRefusal } from '../../core/infra/json-body.ts';

export const requireJsonBody: Koa.Middleware = async (ctx, next) => {
  const refusal = nonJsonBodyRefusal(ctx.req, () => Boolean(ctx.request.is('application/json')));
  if (refusal !== null) ctx.throw(415, refusal);
  await next();
};
