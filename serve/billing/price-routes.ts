// GET /billing/prices (free): what each billed call costs, read off the constants billing holds and
// settles with, so a client (the dashboard's search page) can show the hold before it runs a call.
import Router from '@koa/router';
import { toCredits } from '../../ledger/money.ts';
import { PRICE } from '../jobs/job-request.ts';
import { SEARCH_LIMIT_DEFAULT, SEARCH_LIMIT_MAX } from '../search/search-body.ts';
import { PER_RECORD_MICRO } from './holds.ts';

export function pricesBody() {
  return {
    unit: 'credits',
    search: { per_record: toCredits(PER_RECORD_MICRO), default_limit: SEARCH_LIMIT_DEFAULT, max_limit: SEARCH_LIMIT_MAX },
    jobs: {
      records: { per_record: toCredits(PRICE.record) },
      insights: { per_record: toCredits(PRICE.insightRecord), include_signals: toCredits(PRICE.signals) },
      patterns: { per_call: toCredits(PRICE.patterns) },
      stats: { per_call: toCredits(PRICE.stats) },
    },
  };
}

export function pricesRouter(): Router {
  const r = new Router();
  r.get('/billing/prices', (ctx) => {
    ctx.body = pricesBody();
  });
  return r;
}
