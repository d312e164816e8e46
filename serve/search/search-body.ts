// The POST /search body (docs/api.md), validated strictly: only query, limit and window; every
// problem named in the 400's message.
import { z } from 'zod';
import { WINDOW_KEYS, type WindowKey } from '../../core/windows.ts';
import { badRequest } from '../http/http-error.ts';

export const SEARCH_LIMIT_MAX = 300;
export const SEARCH_LIMIT_DEFAULT = 100;
export const SEARCH_WINDOW_DEFAULT: WindowKey = '30d';
export const QUERY_MAX_CHARS = 1000;

export const searchBodySchema = z.strictObject(
  {
    query: z
      .string({ error: (i) => (i.input === undefined ? 'query is required' : 'query must be a string') })
      .trim()
      .min(1, 'query must not be empty')
      .max(QUERY_MAX_CHARS, `query must be at most ${QUERY_MAX_CHARS} characters`),
    limit: z
      .number({ error: 'limit must be a number' })
      .int('limit must be an integer')
      .min(1, 'limit must be a positive integer')
      .max(SEARCH_LIMIT_MAX, `limit must be at most ${SEARCH_LIMIT_MAX}`)
      .default(SEARCH_LIMIT_DEFAULT),
    window: z.enum(WINDOW_KEYS, { error: `window must be one of ${WINDOW_KEYS.join(', ')}` }).default(SEARCH_WINDOW_DEFAULT),
  },
  {
    error: (i) =>
      i.code === 'unrecognized_keys'
        ? `unknown field${i.keys.length > 1 ? 's' : ''} ${i.keys.map((k) => `"${k}"`).join(', ')}: only query, limit and window are allowed`
        : 'the body must be a JSON object',
  },
);

export interface SearchBody {
  query: string;
  limit: number;
  window: WindowKey;
}

export function parseSearchBody(body: unknown): SearchBody {
  const r = searchBodySchema.safeParse(body);
  if (!r.success) throw badRequest(r.error.issues.map((i) => i.message).join('; '));
  return r.data;
}
