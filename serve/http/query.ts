// Query-string rules as zod schemas, the one definition each endpoint's parameters have: the routes
// parse with them (queryFrom), the MCP tools take them as their input schemas, and the OpenAPI
// document's parameters are generated from them (queryParameters). A field's message names the
// problem; numbers arrive as text in a query string and as numbers in an MCP call, and both read
// the same (a string of digits is taken as its number, anything else fails with the field's message).
import { z } from 'zod';
import { WINDOW_KEYS } from '../../core/snapshots/windows.ts';
import { badRequest } from './http-error.ts';

/** An integer in [min, max], with the messages every query integer has. */
export function intField(name: string, min: number, max: number) {
  const range = `${name} must be between ${min} and ${max}`;
  return z
    .number({ error: `${name} must be an integer` })
    .int(`${name} must be an integer`)
    .min(min, range)
    .max(max, range);
}

/** One of the four windows. */
export function windowField(name = 'window') {
  return z.enum(WINDOW_KEYS, { error: `${name} must be one of ${WINDOW_KEYS.join(', ')}` });
}

/** A page's size and start (narrative reads page by offset; docs/api.md, "Paging"). */
export const pageFields = (dflt: number, max: number) => ({
  limit: intField('limit', 1, max).default(dflt).describe(`1..${max}, default ${dflt}`),
  offset: intField('offset', 0, 10_000_000).default(0).describe('default 0'),
});

/** An opaque page cursor: the nextCursor of the previous page (pattern reads and /usage). */
export const cursorField = z
  .string({ error: 'cursor must be a string' })
  .min(1, 'cursor must not be empty')
  .describe('nextCursor of the previous page');

type Shape = Record<string, z.ZodType>;

/** The schema inside optional and default wrappers. */
function inner(s: z.ZodType): z.ZodType {
  const def = (s as unknown as { def: { type: string; innerType?: z.ZodType } }).def;
  return (def.type === 'optional' || def.type === 'default') && def.innerType ? inner(def.innerType) : s;
}

/** The query as the schema reads it: digit strings become numbers for number fields. */
function coerce(shape: Shape, query: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...query };
  for (const [k, field] of Object.entries(shape)) {
    const v = out[k];
    if (typeof v === 'string' && /^-?\d+$/.test(v) && inner(field) instanceof z.ZodNumber) out[k] = Number(v);
  }
  return out;
}

/** Parse a query string with its schema; a 400 naming every problem otherwise. */
export function queryFrom<S extends z.ZodObject>(schema: S, query: Record<string, unknown>): z.output<S> {
  const r = schema.safeParse(coerce(schema.shape as Shape, query));
  if (!r.success) throw badRequest(r.error.issues.map((i) => i.message).join('; '));
  return r.data;
}

/** The OpenAPI parameters of a query schema (JSON Schema 2020-12, as OpenAPI 3.1 takes it). */
export function queryParameters(schema: z.ZodObject): Array<Record<string, unknown>> {
  return Object.entries(schema.shape as Shape).map(([name, field]) => {
    const { $schema: _s, description, ...json } = z.toJSONSchema(field, { io: 'input' }) as Record<string, unknown>;
    return { name, in: 'query', required: !field.safeParse(undefined).success, schema: json, ...(description ? { description } : {}) };
  });
}

/** A body schema as OpenAPI takes it. */
export function bodySchema(schema: z.ZodType): Record<string, unknown> {
  const { $schema: _s, ...json } = z.toJSONSchema(schema, { io: 'input' }) as Record<string, unknown>;
  return json;
}
