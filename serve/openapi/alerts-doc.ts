// Alerts in the OpenAPI document (docs/api.md, "Alerts"): the watch request from the route's own zod
// schema, a watch as kept, an event it fires, and the event with its delivery state.
import { ALERT_CONDITIONS } from '../alerts/alert-model.ts';
import { deliveriesQuery } from '../alerts/delivery-routes.ts';
import { LIFECYCLES, watchBodySchema } from '../alerts/watch-schema.ts';
import { bodySchema, queryParameters } from '../http/query.ts';
import { bool, errors, int, json, nullable, obj, pathParam, ref, str, unit, windowEnum, type Schema } from './schema-kit.ts';
import { lifecycle } from './shared-schemas.ts';

const CONDITION_TYPES = ALERT_CONDITIONS.map((c) => `narrative.${c}`);

const watchTarget: Schema = {
  oneOf: [
    obj({ kind: { const: 'query' }, query: str }),
    obj({ kind: { const: 'narrative' }, narrative_key: str }),
    obj({ kind: { const: 'theme' }, theme_key: str }),
    obj({ kind: { const: 'any' } }),
  ],
};

export function alertPaths(): Record<string, Schema> {
  return {
    '/alerts': {
      post: {
        summary:
          'Make a watch (free): events are POSTed, signed, to its url when a publish changes what it watches; the signing secret is in this answer only',
        requestBody: { required: true, content: { 'application/json': { schema: ref('WatchRequest') } } },
        responses: {
          201: json(ref('WatchCreated'), 'The watch and its signing secret (shown once)'),
          409: json(ref('Error'), 'The account has ALERTS_PER_ACCOUNT watches already (the answer carries limit)'),
          ...errors(400, 403, 415, 429),
        },
      },
      get: {
        summary: "The account's watches, oldest first, with their paused state (free)",
        responses: { 200: json(ref('WatchList'), 'Watches'), ...errors(403, 429) },
      },
    },
    '/alerts/{id}': {
      get: {
        summary: "One watch with its last 10 events and their delivery state (free); another account's watch is a 404",
        parameters: [pathParam('id', 'watch id (alw_...)')],
        responses: { 200: json(ref('WatchDetail'), 'The watch'), ...errors(403, 404, 429) },
      },
      delete: {
        summary: 'Delete a watch and its events (free)',
        parameters: [pathParam('id', 'watch id (alw_...)')],
        responses: { 200: json(ref('WatchDeleted'), 'Deleted'), ...errors(403, 404, 429) },
      },
    },
    '/alerts/{id}/deliveries': {
      get: {
        summary: "A watch's delivery log (free): each attempt's status, error, latency and outcome, newest first",
        parameters: [pathParam('id', 'watch id (alw_...)'), ...queryParameters(deliveriesQuery)],
        responses: { 200: json(ref('DeliveryLog'), 'Attempts, newest first'), ...errors(400, 403, 404, 429) },
      },
    },
    '/alerts/{id}/events/{event_id}/redeliver': {
      post: {
        summary: "Queue one of the watch's events again now, whatever its state (free); the receiver de-duplicates by X-Alert-Event-Id",
        parameters: [pathParam('id', 'watch id (alw_...)'), pathParam('event_id', 'event id (evt_...)')],
        responses: {
          202: json(ref('Redelivery'), 'Queued'),
          409: json(ref('WatchPaused'), 'The watch is paused: resume it, which queues its waiting events'),
          ...errors(400, 403, 404, 429),
        },
      },
    },
    '/alerts/{id}/resume': {
      post: {
        summary: 'Unpause a watch and queue the events that waited (free)',
        parameters: [pathParam('id', 'watch id (alw_...)')],
        responses: { 200: json(ref('WatchResumed'), 'Resumed'), ...errors(400, 403, 404, 429) },
      },
    },
  };
}

/** An event a watch fires (docs/api.md, "The event"), and the figures it compares. */
function eventSchemas(): Record<string, Schema> {
  return {
    NarrativeFigures: obj({
      generation: str,
      narrative_id: str,
      content_count: int,
      momentum_score: unit,
      emerging_score: unit,
      lifecycle,
      last_day: nullable('string'),
      last_day_posts: int,
      spike: bool,
    }),
    AlertEvent: obj({
      id: { type: 'string', pattern: '^evt_' },
      type: { type: 'string', enum: CONDITION_TYPES },
      watch_id: str,
      account: str,
      created_at: str,
      generation: str,
      previous_generation: nullable('string'),
      window: windowEnum,
      narrative: obj({
        id: str,
        narrative_key: str,
        label: str,
        summary: str,
        theme_id: nullable('string'),
        url: { ...str, description: "{base_url}/narratives/{id}: the API's (needs a key)" },
        dashboard_url: { ...str, description: "{base_url}/ui/narrative.html?id={id}: the dashboard's page" },
      }),
      why: ref('AlertWhy'),
      matches: {
        type: 'array',
        minItems: 1,
        description: 'every change the event covers: a condition one narrative of the story met, the primary (top-level) first',
        items: obj({
          window: windowEnum,
          condition: { type: 'string', enum: [...ALERT_CONDITIONS] },
          narrative_id: str,
          narrative_key: str,
          label: str,
          why: ref('AlertWhy'),
        }),
      },
      posts: {
        type: 'array',
        maxItems: 3,
        items: obj({ uuid: str, title: nullable('string'), text: nullable('string'), url: nullable('string') }),
      },
    }),
    AlertWhy: obj({ text: str, before: nullable(ref('NarrativeFigures')), after: ref('NarrativeFigures') }),
  };
}

export function alertSchemas(): Record<string, Schema> {
  return {
    WatchRequest: bodySchema(watchBodySchema),
    Watch: obj({
      id: { type: 'string', pattern: '^alw_' },
      account: str,
      name: nullable('string'),
      target: watchTarget,
      windows: { type: 'array', items: windowEnum, minItems: 1 },
      conditions: obj(
        {},
        {
          spike: { const: true },
          lifecycle: obj({}, { to: { type: 'array', items: { type: 'string', enum: [...LIFECYCLES] } } }),
          momentum: obj({ level: unit, direction: { type: 'string', enum: ['up', 'down'] } }),
          new_narrative: { const: true },
        },
      ),
      url: str,
      created_at: str,
      secret_version: int,
      paused: nullable(obj({ at: str, reason: str })),
    }),
    ...eventSchemas(),
    EventState: obj({
      event: ref('AlertEvent'),
      status: { type: 'string', enum: ['pending', 'delivered', 'failed', 'paused'] },
      attempts: int,
      next_attempt_at: nullable('string'),
      delivered_at: nullable('string'),
    }),
    WatchCreated: obj({ watch: ref('Watch'), secret: { type: 'string', pattern: '^whsec_' } }),
    WatchList: obj({ items: { type: 'array', items: ref('Watch') }, total: int, limit: int }),
    WatchDetail: obj({ watch: ref('Watch'), events: { type: 'array', items: ref('EventState'), maxItems: 10 } }),
    WatchDeleted: obj({ id: str, deleted: { const: true } }),
    DeliveryAttempt: obj({
      event_id: str,
      watch_id: str,
      attempt: { type: 'integer', minimum: 1 },
      at: str,
      status: nullable('integer'),
      error: nullable('string'),
      latency_ms: { type: 'integer', minimum: 0 },
      outcome: { type: 'string', enum: ['delivered', 'retry', 'gave_up'] },
    }),
    DeliveryLog: obj({
      watch_id: str,
      paused: nullable(obj({ at: str, reason: str })),
      items: { type: 'array', items: ref('DeliveryAttempt') },
      limit: int,
    }),
    Redelivery: { allOf: [obj({ queued: { const: true } }), ref('EventState')] },
    WatchResumed: obj({ watch: ref('Watch'), was_paused: bool, queued: int }),
    WatchPaused: obj({ error: str, paused: obj({ at: str, reason: str }) }),
  };
}
