// Billing in the OpenAPI document: GET /billing/prices and the 402 of a call the balance does not cover.
import { errors, int, json, num, obj, ref, str, windowEnum, type Schema } from './schema-kit.ts';

/** The 402 answer (docs/api.md, "Billing and limits"). */
export const insufficientCredits = obj(
  {
    error: { type: 'string', enum: ['insufficient_credits'] },
    credits_required: num,
    credits_available: num,
    recommendations: obj({
      maxLimitForWindow: {
        type: 'integer',
        minimum: 0,
        description:
          'The largest limit the available balance covers; 0 for patterns and stats, and for ' +
          "insights when it cannot cover the window's minimum analysis depth (7d 375, 30d and 90d " +
          '750, all 1,500 records), with or without includeSignals',
      },
      topUpUrl: str,
    }),
    tier: { type: 'string', enum: ['1', '2'] },
    window: windowEnum,
  },
  { request_id: str },
);

export function billingPaths(): Record<string, Schema> {
  return {
    '/billing/prices': {
      get: {
        summary: 'What each billed call costs, in credits (free): the search hold is limit x search.per_record',
        responses: { 200: json(ref('Prices'), 'Prices'), ...errors(403, 429) },
      },
    },
  };
}

export function billingSchemas(): Record<string, Schema> {
  return {
    Prices: obj({
      unit: { type: 'string', enum: ['credits'] },
      search: obj({ per_record: num, default_limit: int, max_limit: int }),
      jobs: obj({
        records: obj({ per_record: num }),
        insights: obj({ per_record: num, include_signals: num }),
        patterns: obj({ per_call: num }),
        stats: obj({ per_call: num }),
      }),
    }),
  };
}
