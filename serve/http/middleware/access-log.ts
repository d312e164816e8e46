// One JSON line per request (docs/operations.md): id, route, status, time, account and credits
// used; never a key or a body. Written however the request ended.
import type Koa from 'koa';
import type { Logger } from '../../../core/infra/log.ts';
import type { RequestState } from '../app-state.ts';

export function accessLog(log: Logger): Koa.Middleware<RequestState> {
  return async (ctx, next) => {
    const t0 = performance.now();
    try {
      await next();
    } finally {
      log.info(
        {
          requestId: ctx.state.requestId,
          method: ctx.method,
          path: ctx.path,
          status: ctx.status,
          ms: Math.round((performance.now() - t0) * 100) / 100,
          account: ctx.state.caller?.account ?? null,
          credits: ctx.response.get('X-Service-Credits-Used') || null,
        },
        'access',
      );
    }
  };
}
