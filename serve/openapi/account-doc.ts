// The account's reads in the OpenAPI document: GET /usage (its query from the route's own zod
// schema) and GET /health.
import { usageQuery } from '../account/account-queries.ts';
import { queryParameters } from '../http/query.ts';
import { bool, errors, int, json, nullable, num, obj, readErrors, ref, str, strList, type Schema } from './schema-kit.ts';

export function accountPaths(): Record<string, Schema> {
  return {
    '/usage': {
      get: {
        summary: 'The credit ledger of the caller, newest first (free)',
        parameters: queryParameters(usageQuery),
        responses: { 200: json(ref('Usage'), 'Entries'), ...readErrors },
      },
    },
    '/livez': {
      get: {
        summary: 'Liveness: 200 while the process serves HTTP (no key; an orchestrator restarts it when this fails)',
        security: [],
        responses: { 200: json(ref('Alive'), 'Alive') },
      },
    },
    '/readyz': {
      get: {
        summary: 'Readiness: 200 when a generation is loaded and the ledger answers, 503 with the reasons otherwise (no key)',
        security: [],
        responses: {
          200: json(ref('Ready'), 'Ready'),
          503: json(ref('NotReady'), 'Not ready: take it out of the load balancer'),
        },
      },
    },
    '/health': {
      get: {
        summary: 'Service status and data freshness (free)',
        responses: { 200: json(ref('Health'), 'Status'), ...errors(403, 429) },
      },
    },
  };
}

export function accountSchemas(): Record<string, Schema> {
  return {
    Alive: obj({ status: { const: 'alive' } }),
    Ready: obj({ status: { const: 'ready' }, generation: str }),
    NotReady: obj({ status: { const: 'not ready' }, reasons: strList }),
    Usage: obj({
      account: str,
      balance: num,
      held: num,
      available: num,
      nextCursor: nullable('string'),
      entries: {
        type: 'array',
        items: obj({
          id: str,
          type: { type: 'string', enum: ['topup', 'settlement', 'refund'] },
          credits: num,
          held: nullable('number'),
          charged: nullable('number'),
          released: nullable('number'),
          balanceAfter: num,
          keyId: nullable('string'),
          ref: nullable('string'),
          what: nullable('string'),
          reason: nullable('string'),
          at: str,
        }),
      },
    }),
    Health: obj({
      status: { type: 'string', enum: ['ok', 'degraded'] },
      generation: str,
      computed_at: str,
      as_of: str,
      data_age_seconds: num,
      loaded_at: str,
      rows: int,
      platforms: strList,
      narratives: int,
      patterns: int,
      draining_generations: int,
      last_load_error: nullable('string'),
      // available false: PostgreSQL is out of reach (the figures it would give are null; docs/api.md, "During a database outage").
      ledger: obj({
        backend: { type: 'string', enum: ['file', 'postgres'] },
        available: bool,
        last_seq: nullable('integer'),
        open_holds: nullable('integer'),
        pending_writes: nullable('integer'),
        recovered_ms: nullable('number'),
        torn_tail_cut: nullable('boolean'),
      }),
      search: obj({
        answer_workers: int,
        worker_restarts: int,
        answer_cache: obj({ entries: int, bytes: int, hits: int, misses: int }),
        // The last swap's warm-up (docs/operations.md, "Serving"): the served generation's, null before any.
        warm_up: nullable(obj({ generation: str, searches: int, of: int, failed: int, ms: int })),
      }),
      // The free map reads' kept answers (READ_CACHE_MB: serve/maps/read-cache.ts).
      read_cache: obj({ entries: int, bytes: int, hits: int, misses: int }),
      uptime_seconds: num,
    }),
  };
}
