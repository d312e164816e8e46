// GET /billing/prices (free): what each billed call costs, read off the price table billing holds
// and settles with (prices.ts), so a client (the dashboard) can show the hold before it runs a call.
import Router from '@koa/router';
import type { ApiState } from '../generation/api-state.ts';
import { toCredits } from '../../ledger/money.ts';
import { SEARCH_LIMIT_DEFAULT, SEARCH_LIMIT_MAX } from '../search/search-body.ts';
import { PRICES } from './prices.ts';

function pricesBody() {
  return {
    unit: 'credits',
    search: { per_record: toCredits(PRICES.record), default_limit: SEARCH_LIMIT_DEFAULT, max_limit: SEARCH_LIMIT_MAX },
    jobs: {
      records: { per_record: toCredits(PRICES.record) },
      insights: { per_record: toCredits(PRICES.insightRecord), include_signals: toCredits(PRICES.signals) },
      patterns: { per_call: toCredits(PRICES.patterns) },
      stats: { per_call: toCredits(PRICES.stats) },
    },
  };
}

export function pricesRouter(): Router {
  const r = new Router<ApiState>();
  r.get('/billing/prices', (ctx) => {
    ctx.body = pricesBody();
  });
  return r;
}
