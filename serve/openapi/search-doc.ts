// POST /search in the OpenAPI document: the body from the route's own zod schema, the answer, the
// 202 of a search handed to an insights job, and the 503 of a full search queue.
import { toCredits } from '../../ledger/money.ts';
import { PRICES } from '../billing/prices.ts';
import { bodySchema } from '../http/query.ts';
import { idempotencyKeySchema } from '../http/idempotency-key.ts';
import { searchBodySchema } from '../search/search-body.ts';
import { errors, json, num, obj, ref, str, windowEnum, type Schema } from './schema-kit.ts';

export function searchPaths(): Record<string, Schema> {
  return {
    '/search': {
      post: {
        summary: `Synchronous hybrid search; ${toCredits(PRICES.record)} credits per row returned (hold: limit x ${toCredits(PRICES.record)})`,
        parameters: [
          {
            name: 'Idempotency-Key',
            in: 'header',
            required: false,
            schema: bodySchema(idempotencyKeySchema),
            description: 'A retry with the same key and body returns the original answer and charge.',
          },
        ],
        requestBody: { required: true, content: { 'application/json': { schema: ref('SearchRequest') } } },
        responses: {
          200: {
            ...json(ref('SearchResponse'), 'Ranked content with its creators and narratives'),
            headers: {
              'X-Service-Credits-Used': { schema: str, description: 'credits charged by this call' },
              'X-Service-Credits-Remaining': { schema: str, description: 'available credits after the call' },
            },
          },
          202: {
            ...json(
              ref('SearchHandedToJob'),
              'Over SEARCH_BUDGET_MS: the hold released, an insights job submitted instead (docs/api.md, "POST /search")',
            ),
            headers: {
              'X-Service-Credits-Used': { schema: str, description: "the job's hold (its charge on a cache hit)" },
              'X-Service-Credits-Remaining': { schema: str, description: 'available credits' },
            },
          },
          ...errors(400, 402, 403, 409, 415, 422, 429),
          503: {
            ...json(
              ref('Error'),
              'The search queue is full (SEARCH_QUEUE_MAX searches in the search workers), or PostgreSQL is out of reach ' +
                '(DATABASE_URL; retry with the same Idempotency-Key): the hold released, nothing charged',
            ),
            headers: { 'Retry-After': { schema: str, description: 'seconds to wait before trying again' } },
          },
        },
      },
    },
  };
}

export function searchSchemas(): Record<string, Schema> {
  return {
    SearchRequest: bodySchema(searchBodySchema),
    SearchResponse: obj({
      content: { type: 'array', items: ref('ContentItem'), maxItems: 300 },
      creators: { type: 'array', items: ref('Creator') },
      narratives: { type: 'array', items: ref('Narrative') },
      patterns: { type: 'array', items: ref('PatternEntry') },
      query: str,
      window: windowEnum,
      request_id: str,
      response_time_ms: num,
      usage: obj({ credits: num }),
    }),
  };
}

/** The 202 answer of a search over SEARCH_BUDGET_MS. */
export const searchHandedToJob = obj(
  {
    jobId: str,
    reason: { type: 'string', enum: ['sync_budget_exceeded'] },
    request_id: str,
    status: { type: 'string', enum: ['queued', 'running', 'succeeded'] },
    statusUrl: str,
  },
  { charged: num, estimated_cost: num },
);
