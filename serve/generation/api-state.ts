// What a request behind the key check carries on Koa's ctx.state: its caller (http/auth.ts) and
// the generation leased for it (app.ts). Here, not in http/, because http/ knows no generation.
import type { Caller } from '../http/auth.ts';
import type { RequestState } from '../http/app-state.ts';
import type { LoadedGeneration } from './loaded-generation.ts';

/** A request behind the key check: what the API's routers see. */
export interface ApiState extends RequestState {
  caller: Caller;
  gen: LoadedGeneration;
}
