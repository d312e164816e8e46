// POST /intelligence/jobs and GET /intelligence/jobs/{id} (docs/jobs.md): submit answers
// 202 with the job and its hold (estimated_cost), or 200 with the result inline and `charged` on
// a cache hit; polling shows the job's state and, once it succeeded, its result. Only the account
// that submitted a job sees it (404 for any other). Idempotency-Key on submit: the same key and
// body give the same job; the same key with another body is a 422.
import Router from '@koa/router';
import type { ApiState } from '../generation/api-state.ts';
import { requireJsonBody } from '../http/require-json-body.ts';
import { notFound } from '../http/http-error.ts';
import { idempotencyKeyHeader, requestHash } from '../http/idempotency-key.ts';
import { parseJobRequest } from './job-request.ts';
import type { JobRunner } from './job-runner.ts';

/** A job's view with its result spliced in as it is stored (results can be megabytes: never parsed here). */
function withResult(view: Record<string, unknown>, result: Buffer): Buffer {
  const head = JSON.stringify(view);
  return Buffer.concat([Buffer.from(`${head.slice(0, -1)},"result":`), result, Buffer.from('}')]);
}

export function jobsRouter(runner: JobRunner): Router {
  const r = new Router<ApiState>();
  r.post('/intelligence/jobs', requireJsonBody, async (ctx) => {
    const caller = ctx.state.caller;
    const request = parseJobRequest(ctx.request.body);
    const idemKey = idempotencyKeyHeader(ctx);
    const bodyHash = requestHash(request);
    const out = await runner.submit(
      { account: caller.account, keyId: caller.key.id },
      request,
      ctx.state.requestId,
      idemKey ? { key: idemKey, bodyHash } : null,
    );
    // On a 202 the credits used are the reserved estimate.
    const headers = await runner.creditHeaders(out);
    ctx.status = out.status;
    ctx.type = 'application/json; charset=utf-8';
    const view = { ...runner.view(out.job), request_id: ctx.state.requestId };
    ctx.set(headers);
    ctx.body = out.status === 200 ? withResult(view, out.result) : view;
  });
  r.get('/intelligence/jobs/:id', async (ctx) => {
    const caller = ctx.state.caller;
    const job = await runner.get(caller.account, ctx.params.id as string);
    if (!job) throw notFound(`no job ${ctx.params.id}`);
    const view = runner.view(job);
    ctx.type = 'application/json; charset=utf-8';
    ctx.body = job.status === 'succeeded' && job.hasResult ? withResult(view, await runner.resultOf(job)) : view;
  });
  return r;
}
