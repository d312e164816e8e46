// Headers every answer carries, whatever part writes it.
import type Koa from 'koa';

export const securityHeaders: Koa.Middleware = async (ctx, next) => {
  // Every answer is what its Content-Type says (JSON, a thumbnail we encoded, a dashboard file).
  ctx.set('X-Content-Type-Options', 'nosniff');
  await next();
};
