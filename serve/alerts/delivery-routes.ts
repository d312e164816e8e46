// A watch's deliveries (docs/api.md, "Webhook deliveries"), behind the API key and free like the
// other /alerts routes: GET /alerts/{id}/deliveries is the delivery log (each attempt's status,
// latency and outcome, newest first), POST /alerts/{id}/events/{event_id}/redeliver queues one
// event again now, POST /alerts/{id}/resume unpauses a watch and queues the events that waited.
// Another account's watch is a 404, as one that does not exist.
import Router from '@koa/router';
import type { ApiState } from '../generation/api-state.ts';
import { z } from 'zod';
import { HttpError, notFound } from '../http/http-error.ts';
import { intField, queryFrom } from '../http/query.ts';
import type { AlertOutbox } from './alert-model.ts';
import type { WatchStore } from './watch-store.ts';
import { ownWatch } from './alert-routes.ts';
import { ATTEMPTS_KEPT } from './outbox-store.ts';
import { idField, watchIdField } from './watch-schema.ts';

/** GET /alerts/{id}/deliveries: the route, the MCP tool and the OpenAPI parameters read this. */
export const deliveriesQuery = z.object({
  limit: intField('limit', 1, ATTEMPTS_KEPT)
    .default(50)
    .describe(`1..${ATTEMPTS_KEPT}, default 50 (a watch keeps its newest ${ATTEMPTS_KEPT})`),
});

export const redeliverParams = z.object({ id: watchIdField, event_id: idField('event_id', 'evt') });

interface DeliveryRouteDeps {
  watches: WatchStore;
  outbox: AlertOutbox;
}

export function deliveryRouter(deps: DeliveryRouteDeps): Router {
  const r = new Router<ApiState>();
  r.get('/alerts/:id/deliveries', async (ctx) => {
    const { limit } = queryFrom(deliveriesQuery, ctx.query);
    const watch = await ownWatch(deps, ctx, ctx.params.id);
    ctx.body = { watch_id: watch.id, paused: watch.paused, items: await deps.outbox.attempts(watch.id, limit), limit };
  });
  r.post('/alerts/:id/events/:event_id/redeliver', async (ctx) => {
    const { id, event_id } = queryFrom(redeliverParams, ctx.params);
    const watch = await ownWatch(deps, ctx, id);
    if (watch.paused)
      throw new HttpError(409, {
        error: `watch ${watch.id} is paused (${watch.paused.reason}): POST /alerts/${watch.id}/resume queues its waiting events`,
        paused: watch.paused,
      });
    const state = await deps.outbox.redeliver(watch.id, event_id);
    if (!state) throw notFound(`watch ${watch.id} has no event ${event_id} (GET /alerts/${watch.id} lists its last events)`);
    ctx.status = 202;
    // The event itself under `event` (as POSTed to the receiver), its delivery state beside it.
    ctx.body = { queued: true, ...state };
  });
  r.post('/alerts/:id/resume', async (ctx) => {
    const watch = await ownWatch(deps, ctx, ctx.params.id);
    // Unpaused first: a run taking a queued event meanwhile must find the watch open.
    if (watch.paused) await deps.watches.setPaused(watch.id, null);
    const queued = await deps.outbox.resume(watch.id);
    ctx.body = { watch: { ...watch, paused: null }, was_paused: watch.paused !== null, queued };
  });
  return r;
}
