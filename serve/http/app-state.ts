// What the app's middlewares put on Koa's ctx.state, typed once so handlers read it without casts.
// Every request gets an id (middleware/request-id.ts); a request past the key check has its
// caller (auth.ts) and the generation leased for it as well (generation/api-state.ts's ApiState).
import type { Caller } from './auth.ts';

/** Any request: the key check may not have run (the dashboard's pages, a 404, a 403). */
export interface RequestState {
  requestId: string;
  caller?: Caller;
}
