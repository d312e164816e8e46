// The fields the JSON bodies share (POST /search, POST /intelligence/jobs), each defined once with
// its messages: the query text, a positive limit, the strict-object rule naming what is allowed.
import { z } from 'zod';

const QUERY_MAX_CHARS = 1000;

/** The free-text query: a non-empty string (after trimming) of at most QUERY_MAX_CHARS. */
export const queryTextField = () =>
  z
    .string({ error: (i) => (i.input === undefined ? 'query is required' : 'query must be a string') })
    .trim()
    .min(1, 'query must not be empty')
    .max(QUERY_MAX_CHARS, `query must be at most ${QUERY_MAX_CHARS} characters`);

/** A body's `limit`: a positive integer up to `max`. */
export const bodyLimitField = (max: number) =>
  z
    .number({ error: 'limit must be a number' })
    .int('limit must be an integer')
    .min(1, 'limit must be a positive integer')
    .max(max, `limit must be at most ${max}`);

/** The strict object's message: an undeclared field named, or a body that is not an object. */
export const strictBody = (allowed: string) => ({
  error: (i: { code: string; keys?: string[] }) =>
    i.code === 'unrecognized_keys'
      ? `unknown field${i.keys!.length > 1 ? 's' : ''} ${i.keys!.map((k) => `"${k}"`).join(', ')}: only ${allowed} are allowed`
      : 'the body must be a JSON object',
});
