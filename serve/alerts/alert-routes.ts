// The watches of an account (docs/api.md, "Alerts"), behind the API key like the map reads and free
// like them: POST /alerts makes one (its signing secret shown in that answer only), GET /alerts
// lists them with their paused state, GET /alerts/{id} shows one with its last events and where
// their delivery stands, DELETE /alerts/{id} removes it and its events. Another account's watch is
// a 404, as one that does not exist.
import { randomBytes } from 'node:crypto';
import Router from '@koa/router';
import type { ApiState } from '../generation/api-state.ts';
import { requireJsonBody } from '../http/require-json-body.ts';
import type { WindowKey } from '../../core/snapshots/windows.ts';
import type { LoadedGeneration } from '../generation/loaded-generation.ts';
import { badRequest, HttpError, notFound } from '../http/http-error.ts';
import { webhookUrlRefusal } from './address-guard.ts';
import type { AlertOutbox, Watch, WatchTarget } from './alert-model.ts';
import type { WatchStore } from './watch-store.ts';
import { watchSecret } from './watch-secret.ts';
import { parseWatchBody, watchIdField, type WatchBody } from './watch-schema.ts';
import { queryFrom } from '../http/query.ts';
import { z } from 'zod';

/** Events GET /alerts/{id} shows, newest first. */
const WATCH_EVENTS_SHOWN = 10;

export interface AlertRouteDeps {
  watches: WatchStore;
  outbox: AlertOutbox;
  /** ALERTS_PER_ACCOUNT. */
  perAccount: number;
  /** ALERTS_ALLOW_PRIVATE=1. */
  allowPrivate: boolean;
  /** The key watch secrets derive from (watch-secret.ts signingKey). */
  signingKey: Buffer;
}

const accountOf = (ctx: { state: ApiState }) => ctx.state.caller.account;

/**
 * The target as it is kept: a narrative or theme named by an id of the served generation becomes
 * its stable key; its window is the one a narrative or theme target watches.
 */
function resolveTarget(gen: LoadedGeneration, t: WatchBody['target']): { target: WatchTarget; window: WindowKey | null } {
  const { maps } = gen;
  switch (t.kind) {
    case 'query':
      return { target: { kind: 'query', query: t.query }, window: null };
    case 'any':
      return { target: { kind: 'any' }, window: null };
    case 'narrative': {
      const named = t.narrative_key ?? t.id!;
      const ln = maps.narrativeById.get(named) ?? maps.narrativeByKey.get(named);
      const key = ln?.narrative.narrative_key ?? maps.earlierNarrativeIds.get(named)?.narrative_key ?? named;
      const window = ln?.narrative.window_key ?? maps.narrativeHistory.get(key)?.window_key;
      if (!window)
        throw badRequest(
          named.startsWith('em-')
            ? `target ${named} is an emergent narrative: it has no narrative_key to watch (watch its words with a query target)`
            : `target ${named} is not a narrative id of generation ${gen.id} nor a narrative_key it knows (GET /narratives/trending lists them)`,
        );
      return { target: { kind: 'narrative', narrative_key: key }, window: window as WindowKey };
    }
    case 'theme': {
      const named = t.theme_key ?? t.id!;
      const lt = maps.themeById.get(named) ?? maps.themeByKey.get(named);
      if (!lt) throw badRequest(`target ${named} is not a theme id or theme_key of generation ${gen.id} (GET /themes lists them)`);
      return { target: { kind: 'theme', theme_key: lt.theme.theme_key }, window: lt.theme.window_key as WindowKey };
    }
  }
}

/** The caller's watch by its path id: a malformed id is a 400; another account's watch a 404, as one that does not exist. */
export async function ownWatch(deps: Pick<AlertRouteDeps, 'watches'>, ctx: { state: ApiState }, raw: string | undefined): Promise<Watch> {
  const { id } = queryFrom(z.object({ id: watchIdField }), { id: raw });
  const w = await deps.watches.get(id);
  if (!w || w.account !== accountOf(ctx)) throw notFound(`no watch ${id} (GET /alerts lists yours)`);
  return w;
}

export function alertsRouter(deps: AlertRouteDeps): Router {
  const r = new Router<ApiState>();
  r.post('/alerts', requireJsonBody, async (ctx) => {
    const gen = ctx.state.gen;
    const req = parseWatchBody(ctx.request.body);
    const { target, window } = resolveTarget(gen, req.target);
    if (window && req.windows && !req.windows.includes(window))
      throw badRequest(`the target is in window ${window}, not ${req.windows.join(', ')}: leave windows out, or include ${window}`);
    const refused = await webhookUrlRefusal(req.url, deps.allowPrivate);
    if (refused) throw badRequest(refused);
    const account = accountOf(ctx);
    const watch: Watch = {
      id: `alw_${randomBytes(12).toString('base64url')}`,
      account,
      name: req.name,
      target,
      windows: window ? [window] : (req.windows ?? ['7d']),
      conditions: req.conditions,
      url: req.url,
      created_at: new Date().toISOString(),
      secret_version: 1,
      paused: null,
    };
    if (!(await deps.watches.add(watch, deps.perAccount)))
      throw new HttpError(409, {
        error: `account ${account} has ${deps.perAccount} watches, the most an account may have (ALERTS_PER_ACCOUNT): delete one first (DELETE /alerts/{id})`,
        limit: deps.perAccount,
      });
    ctx.status = 201;
    ctx.body = { watch, secret: watchSecret(deps.signingKey, watch.id, watch.secret_version) };
  });
  r.get('/alerts', async (ctx) => {
    const items = await deps.watches.list(accountOf(ctx));
    ctx.body = { items, total: items.length, limit: deps.perAccount };
  });
  r.get('/alerts/:id', async (ctx) => {
    const watch = await ownWatch(deps, ctx, ctx.params.id);
    ctx.body = { watch, events: await deps.outbox.events(watch.id, WATCH_EVENTS_SHOWN) };
  });
  r.delete('/alerts/:id', async (ctx) => {
    const watch = await ownWatch(deps, ctx, ctx.params.id);
    // The watch first: an evaluation starting meanwhile no longer sees it, so no event of it comes after the forget.
    await deps.watches.remove(watch.id);
    await deps.outbox.forget(watch.id);
    ctx.body = { id: watch.id, deleted: true };
  });
  return r;
}
