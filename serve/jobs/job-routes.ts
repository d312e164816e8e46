// POST /intelligence/jobs and GET /intelligence/jobs/{id} (docs/jobs.md): submit answers
// 202 with the job and its hold (estimated_cost), or 200 with the result inline and `charged` on
// a cache hit; polling shows the job's state and, once it succeeded, its result. Only the account
// that submitted a job sees it (404 for any other). Idempotency-Key on submit: the same key and
// body give the same job; the same key with another body is a 422.
import Router from '@koa/router';
import type Koa from 'koa';
import { requireJsonBody } from '../../core/infra/json-body.ts';
import type { Caller } from '../http/auth.ts';
import { creditHeaders } from '../billing/holds.ts';
import { notFound } from '../http/http-error.ts';
import { idempotencyKeyHeader, requestHash } from '../http/idempotency-key.ts';
import { parseJobRequest } from './job-request.ts';
import type { JobRunner } from './job-runner.ts';
import { ZERO_MICRO } from '../../ledger/money.ts';

/** A job's view with its result spliced in as it is stored (results can be megabytes: never parsed here). */
function withResult(view: Record<string, unknown>, result: Buffer): Buffer {
  const head = JSON.stringify(view);
  return Buffer.concat([Buffer.from(`${head.slice(0, -1)},"result":`), result, Buffer.from('}')]);
}

export function jobsRouter(runner: JobRunner): Router {
  const r = new Router();
  r.post('/intelligence/jobs', requireJsonBody, async (ctx) => {
    const caller = ctx.state.caller as Caller;
    const request = parseJobRequest(ctx.request.body);
    const idemKey = idempotencyKeyHeader(ctx);
    const bodyHash = requestHash(request);
    const out = await runner.submit(
      { account: caller.account, keyId: caller.key.id },
      request,
      ctx.state.requestId as string,
      idemKey ? { key: idemKey, bodyHash } : null,
    );
    const available = await runner.available(caller.account);
    ctx.status = out.status;
    ctx.type = 'application/json; charset=utf-8';
    const view = { ...runner.view(out.job), request_id: ctx.state.requestId as string };
    if (out.status === 200) {
      ctx.set(creditHeaders(out.job.chargedMicro ?? ZERO_MICRO, available));
      ctx.body = withResult(view, out.result);
    } else {
      // On a 202 the credits used are the reserved estimate.
      ctx.set(creditHeaders(out.job.heldMicro, available));
      ctx.body = view;
    }
  });
  r.get('/intelligence/jobs/:id', async (ctx: Koa.Context) => {
    const caller = ctx.state.caller as Caller;
    const job = await runner.get(caller.account, ctx.params.id as string);
    if (!job) throw notFound(`no job ${ctx.params.id}`);
    const view = runner.view(job);
    ctx.type = 'application/json; charset=utf-8';
    ctx.body = job.status === 'succeeded' && job.hasResult ? withResult(view, await runner.resultOf(job)) : view;
  });
  return r;
}
