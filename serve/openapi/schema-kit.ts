// The shorthands the OpenAPI document's parts are written in: JSON Schema 2020-12 pieces, and
// what every operation shares (errors in the API's `{error, request_id}` shape, JSON answers, path ids).
import { WINDOW_KEYS } from '../../core/snapshots/windows.ts';

export type Schema = Record<string, unknown>;
export const ref = (name: string): Schema => ({ $ref: `#/components/schemas/${name}` });
export const nullable = (type: string | Schema): Schema =>
  typeof type === 'string' ? { type: [type, 'null'] } : { anyOf: [type, { type: 'null' }] };
export const obj = (required: Record<string, Schema>, optional: Record<string, Schema> = {}, extra = false): Schema => ({
  type: 'object',
  required: Object.keys(required),
  properties: { ...required, ...optional },
  additionalProperties: extra,
});
export const num: Schema = { type: 'number' };
export const int: Schema = { type: 'integer' };
export const str: Schema = { type: 'string' };
export const bool: Schema = { type: 'boolean' };
export const strList: Schema = { type: 'array', items: str };
export const windowEnum: Schema = { type: 'string', enum: [...WINDOW_KEYS] };
export const unit: Schema = { type: 'number', minimum: 0, maximum: 1 };
export const nonNegative: Schema = { type: 'number', minimum: 0 };
export const paged = (items: Schema, more: Record<string, Schema> = {}) => obj({ items: { type: 'array', items }, ...more });
export const digits: Schema = { type: 'string', pattern: '^[0-9]+$' };

const ERROR_TEXT: Record<number, string> = {
  400: 'Invalid request: the message names the problem',
  402: 'Insufficient credits: nothing was charged',
  403: 'Missing, invalid or revoked x-api-key',
  404: 'Unknown id or route',
  409: 'A request with this Idempotency-Key is still in progress',
  405: 'Method not allowed on this path; Allow lists the methods that are',
  406: 'The MCP transport needs Accept: application/json, text/event-stream',
  415: 'A body sent as anything but Content-Type: application/json (curl -d sends application/x-www-form-urlencoded)',
  422: 'This Idempotency-Key was used with a different body',
  429: 'Rate limit exceeded; see Retry-After',
  503: 'A queue is full (the error names it), or PostgreSQL is out of reach (DATABASE_URL); nothing was held or charged; see Retry-After',
};

/** The error answers of `codes`, each in the API's error shape (402: the insufficient-credits one). */
export const errors = (...codes: number[]) =>
  Object.fromEntries(
    codes.map((c) => [
      String(c),
      { description: ERROR_TEXT[c], content: { 'application/json': { schema: c === 402 ? ref('InsufficientCredits') : ref('Error') } } },
    ]),
  );
export const json = (schema: Schema, description: string) => ({ description, content: { 'application/json': { schema } } });
export const pathParam = (name: string, description: string) => ({ name, in: 'path', required: true, schema: str, description });
/** The errors of a free read (503: a key that cannot be verified while PostgreSQL is out of reach). */
export const readErrors = errors(400, 403, 404, 429, 503);
