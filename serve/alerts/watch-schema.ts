// The POST /alerts body (docs/api.md, "Alerts"): the one definition the route, the MCP tool and
// the OpenAPI document share. Each field's message names the problem; the URL's shape is checked
// here with the others, its address (a DNS lookup) by the route (address-guard.ts).
import { z } from 'zod';
import type { Lifecycle } from '../../core/maps/series.ts';
import type { WindowKey } from '../../core/snapshots/windows.ts';
import { queryTextField, strictBody } from '../http/body-fields.ts';
import { badRequest } from '../http/http-error.ts';
import { windowField } from '../http/query.ts';
import { urlProblem } from './address-guard.ts';
import type { WatchConditions } from './alert-model.ts';

/** An id in a path: `prefix_` and up to 200 of [A-Za-z0-9_-]; anything else is a 400 naming it. */
export const idField = (what: string, prefix: string) =>
  z
    .string({ error: `${what} must be a string` })
    .regex(new RegExp(`^${prefix}_[A-Za-z0-9_-]{1,200}$`), `${what} must be a ${prefix}_... id`)
    .describe(`${what} (${prefix}_...)`);

/** A watch id, as every /alerts/{id} route and MCP tool reads it. */
export const watchIdField = idField('id', 'alw');

export const LIFECYCLES = ['emerging', 'growing', 'peaking', 'declining', 'dormant', 'steady'] as const satisfies readonly Lifecycle[];
const WATCH_NAME_MAX = 200;
const WATCH_URL_MAX = 2048;
const TARGET_KINDS = ['query', 'narrative', 'theme', 'any'] as const;

/** The messages of an object inside the body: a missing one, one of another type, an undeclared field. */
const part = (name: string, allowed: string) => ({
  error: (i: { code: string; keys?: string[]; input?: unknown }) =>
    i.code === 'unrecognized_keys'
      ? `unknown field${i.keys!.length > 1 ? 's' : ''} ${i.keys!.map((k) => `"${k}"`).join(', ')} in ${name}: only ${allowed}`
      : i.input === undefined
        ? `${name} is required`
        : `${name} must be an object`,
});

/** A stable key field (nk-..., tk-...) of a narrative or theme target. */
const stableKey = (key: 'narrative_key' | 'theme_key', prefix: string, what: string) =>
  z
    .string({ error: `target.${key} must be a string` })
    .regex(new RegExp(`^${prefix}-`), `target.${key} must be a ${key} (${prefix}-...)`)
    .optional()
    .describe(`the stable ${key} (GET /${what}s/{id} shows it)`);

/** An id of the served generation (or the stable key), kept as its key. */
const servedId = (key: string, what: string) =>
  z
    .string({ error: 'target.id must be a string' })
    .min(1, 'target.id must not be empty')
    .optional()
    .describe(`a ${what} id of the served generation (or its ${key}): kept as its ${key}`);

const exactlyOne = (key: string, what: string) =>
  [
    (t: { id?: string } & Record<string, unknown>) => (t[key] === undefined) !== (t.id === undefined),
    `a ${what} target takes exactly one of ${key} and id`,
  ] as const;

const watchTargetSchema = z
  .discriminatedUnion(
    'kind',
    [
      z.strictObject(
        { kind: z.literal('query'), query: queryTextField().describe('the words GET /narratives/search would be asked') },
        part('target', 'kind and query are allowed'),
      ),
      z
        .strictObject(
          {
            kind: z.literal('narrative'),
            narrative_key: stableKey('narrative_key', 'nk', 'narrative'),
            id: servedId('narrative_key', 'narrative'),
          },
          part('target', 'kind, narrative_key and id are allowed'),
        )
        .refine(...exactlyOne('narrative_key', 'narrative')),
      z
        .strictObject(
          { kind: z.literal('theme'), theme_key: stableKey('theme_key', 'tk', 'theme'), id: servedId('theme_key', 'theme') },
          part('target', 'kind, theme_key and id are allowed'),
        )
        .refine(...exactlyOne('theme_key', 'theme')),
      z.strictObject({ kind: z.literal('any') }, part('target', 'kind is allowed')),
    ],
    {
      error: (i) =>
        i.input === undefined ? 'target is required: what the watch looks at' : `target.kind must be one of ${TARGET_KINDS.join(', ')}`,
    },
  )
  .describe('what the watch looks at: the narratives a map search finds, one narrative, one theme, or every narrative');

const conditionsSchema = z
  .strictObject(
    {
      spike: z
        .boolean({ error: 'conditions.spike must be a boolean' })
        .optional()
        .describe('the narrative\'s newest day became a spike day (docs/fields.md, "Daily signals")'),
      lifecycle: z
        .strictObject(
          {
            to: z
              .array(z.enum(LIFECYCLES, { error: `conditions.lifecycle.to holds lifecycles: ${LIFECYCLES.join(', ')}` }), {
                error: 'conditions.lifecycle.to must be a list of lifecycles',
              })
              .min(1, 'conditions.lifecycle.to must not be empty (leave it out for any change)')
              .optional()
              .describe('only changes to these lifecycles; absent: any change'),
          },
          part('conditions.lifecycle', 'to is allowed'),
        )
        .optional()
        .describe('its lifecycle changed'),
      momentum: z
        .strictObject(
          {
            level: z
              .number({ error: 'conditions.momentum.level must be a number' })
              .min(0, 'conditions.momentum.level must be between 0 and 1')
              .max(1, 'conditions.momentum.level must be between 0 and 1'),
            direction: z
              .enum(['up', 'down'], { error: 'conditions.momentum.direction must be up or down' })
              .default('up')
              .describe('up (default): from below the level to at or above it; down: the other way'),
          },
          part('conditions.momentum', 'level and direction are allowed'),
        )
        .optional()
        .describe('its momentum_score crossed the level'),
      new_narrative: z
        .boolean({ error: 'conditions.new_narrative must be a boolean' })
        .optional()
        .describe('a narrative the previous generation did not have (by narrative_key)'),
    },
    part('conditions', 'spike, lifecycle, momentum and new_narrative are allowed'),
  )
  .refine(
    (c) => c.spike === true || c.lifecycle !== undefined || c.momentum !== undefined || c.new_narrative === true,
    'conditions must set at least one of spike, lifecycle, momentum and new_narrative',
  );

export const watchBodySchema = z.strictObject(
  {
    name: z
      .string({ error: 'name must be a string' })
      .trim()
      .min(1, 'name must not be empty')
      .max(WATCH_NAME_MAX, `name must be at most ${WATCH_NAME_MAX} characters`)
      .optional(),
    target: watchTargetSchema,
    windows: z
      .array(windowField('windows[]'), { error: 'windows must be a list of windows (7d, 30d, 90d, all)' })
      .min(1, 'windows must not be empty')
      .refine((w) => new Set(w).size === w.length, 'windows must not repeat a window')
      .optional()
      .describe('the windows whose narratives it watches; default ["7d"] (a narrative or theme target: its own window)'),
    conditions: conditionsSchema,
    url: z
      .string({ error: (i) => (i.input === undefined ? 'url is required: the webhook events are POSTed to' : 'url must be a string') })
      .max(WATCH_URL_MAX, `url must be at most ${WATCH_URL_MAX} characters`)
      .superRefine((u, ctx) => {
        const problem = urlProblem(u);
        if (problem) ctx.addIssue({ code: 'custom', message: problem });
      })
      .describe('the webhook: http(s); loopback and private addresses only when the operator allows them'),
  },
  strictBody('name, target, windows, conditions and url'),
);

export type WatchBody = z.output<typeof watchBodySchema>;

/** A parsed body: its conditions with only those set (false ones dropped). */
export interface WatchRequest {
  name: string | null;
  target: WatchBody['target'];
  windows: WindowKey[] | null;
  conditions: WatchConditions;
  url: string;
}

export function parseWatchBody(body: unknown): WatchRequest {
  const r = watchBodySchema.safeParse(body);
  if (!r.success) throw badRequest(r.error.issues.map((i) => i.message).join('; '));
  const c = r.data.conditions;
  const conditions: WatchConditions = {
    ...(c.spike ? { spike: true } : {}),
    ...(c.lifecycle ? { lifecycle: c.lifecycle.to ? { to: c.lifecycle.to } : {} } : {}),
    ...(c.momentum ? { momentum: { level: c.momentum.level, direction: c.momentum.direction } } : {}),
    ...(c.new_narrative ? { new_narrative: true } : {}),
  };
  return { name: r.data.name ?? null, target: r.data.target, windows: r.data.windows ?? null, conditions, url: r.data.url };
}
