// The price table (docs/api.md, "Billing and limits"): what every billed call costs, the one
// place a price is written. Billing holds and settles with it (search-route/search-route.ts, job-request.ts),
// and every text that names a price takes it from here: GET /billing/prices (price-routes.ts,
// which the dashboard reads), the MCP tool descriptions (mcp/tools.ts) and the OpenAPI document
// (openapi/).
import { toMicro, type Credits, type Micro } from '../../ledger/money.ts';

export const PRICES = {
  /** Per record returned: a search's rows, a records job's rows. */
  record: toMicro('0.01'),
  /** Per record an insights job analyses. */
  insightRecord: toMicro('0.015'),
  /** Added to an insights job with includeSignals (when it analysed any record). */
  signals: toMicro(1),
  /** Flat, per call. */
  patterns: toMicro(10),
  stats: toMicro(5),
} as const satisfies Record<string, Micro>;

/** "1 credit", "10 credits": a figure of credits with its word. */
export const creditsWord = (c: Credits): string => `${c} ${c === 1 ? 'credit' : 'credits'}`;
