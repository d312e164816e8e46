// The POST /intelligence/jobs body (docs/jobs.md), validated strictly, and what each kind
// costs (docs/api.md, "Billing and limits"): the hold placed at submit, the charge for what was delivered, and the
// largest limit a balance covers for the 402, from the price table (billing/prices.ts).
import { z } from 'zod';
import type { WindowKey } from '../../core/snapshots/windows.ts';
import { addMicro, timesMicro, toCredits, ZERO_MICRO, type Micro } from '../../ledger/money.ts';
import { creditsWord, PRICES } from '../billing/prices.ts';
import { bodyLimitField, queryTextField, strictBody } from '../http/body-fields.ts';
import { badRequest } from '../http/http-error.ts';
import { windowField } from '../http/query.ts';
import { SEARCH_WINDOW_DEFAULT } from '../search/search-body.ts';

export const JOB_KINDS = ['records', 'insights', 'patterns', 'stats'] as const;
export type JobKind = (typeof JOB_KINDS)[number];

/** docs/api.md, "Billing and limits": records an insights job with includeSignals must analyse, per window. */
export const SIGNALS_FLOOR: Record<WindowKey, number> = { '7d': 375, '30d': 750, '90d': 750, all: 1500 };
/** docs/api.md, "Billing and limits": insights depth when no limit is given. */
export const INSIGHTS_DEPTH_DEFAULT: Record<WindowKey, number> = { '7d': 1500, '30d': 3000, '90d': 3000, all: 3000 };
/** Ours: records returned by default; and how many of the query's records patterns and stats look at. */
export const RECORDS_LIMIT_DEFAULT = 1000;
const SCOPE_LIMIT_DEFAULT = 3000;
/** Ours: the largest limit of any kind (a records job of 10,000 holds 100 credits). */
export const JOB_LIMIT_MAX = 10_000;

export const jobBodySchema = z.strictObject(
  {
    kind: z.enum(JOB_KINDS, { error: `kind must be one of ${JOB_KINDS.join(', ')}` }),
    query: queryTextField(),
    limit: bodyLimitField(JOB_LIMIT_MAX)
      .optional()
      .describe(
        'records: rows (default 1000); insights: depth (default 1500 for 7d, 3000 otherwise); patterns, stats: records looked at (default 3000)',
      ),
    window: windowField().default(SEARCH_WINDOW_DEFAULT),
    includeSignals: z
      .boolean({ error: 'includeSignals must be a boolean' })
      .optional()
      .describe(
        `insights only; +${creditsWord(toCredits(PRICES.signals))}; needs the window floor of records (7d 375, 30d 750, 90d 750, all 1500)`,
      ),
  },
  strictBody('kind, query, limit, window and includeSignals'),
);

/** A submit body with every default applied: two requests are identical when these are. */
export interface JobRequest {
  kind: JobKind;
  query: string;
  limit: number;
  window: WindowKey;
  includeSignals: boolean;
}

export function parseJobRequest(body: unknown): JobRequest {
  const r = jobBodySchema.safeParse(body);
  if (!r.success) throw badRequest(r.error.issues.map((i) => i.message).join('; '));
  const { kind, query, window } = r.data;
  if (r.data.includeSignals !== undefined && kind !== 'insights') throw badRequest('includeSignals applies to insights jobs only');
  const includeSignals = r.data.includeSignals ?? false;
  // docs/jobs.md: an explicit limit below the window's floor cannot give signals.
  if (includeSignals && r.data.limit !== undefined && r.data.limit < SIGNALS_FLOOR[window]) {
    throw badRequest(`includeSignals needs at least ${SIGNALS_FLOOR[window]} records for window ${window}; limit is ${r.data.limit}`);
  }
  const limit =
    r.data.limit ??
    (kind === 'records' ? RECORDS_LIMIT_DEFAULT : kind === 'insights' ? INSIGHTS_DEPTH_DEFAULT[window] : SCOPE_LIMIT_DEFAULT);
  return { kind, query, limit, window, includeSignals };
}

/** the most the job can cost. */
export function holdAmount(r: JobRequest): Micro {
  return chargeFor(r, r.limit, true);
}

/** the charge for `delivered` records (returned or analysed); flat kinds their fee. The hold (`atMost`) counts the signals fee even at 0 records. */
export function chargeFor(r: JobRequest, delivered: number, atMost = false): Micro {
  switch (r.kind) {
    case 'records':
      return timesMicro(PRICES.record, delivered);
    case 'insights': {
      const signals = r.includeSignals && (atMost || delivered > 0) ? PRICES.signals : ZERO_MICRO;
      return addMicro(timesMicro(PRICES.insightRecord, delivered), signals);
    }
    case 'patterns':
      return PRICES.patterns;
    case 'stats':
      return PRICES.stats;
  }
}

/** docs/api.md: tier "2" marks the kind with the prose add-on. */
export const tierOf = (kind: JobKind): '1' | '2' => (kind === 'insights' ? '2' : '1');

/**
 * docs/api.md, "Billing and limits": the largest limit `available` covers; 0 for the flat kinds, and for insights when it
 * cannot cover the window's minimum analysis depth: the window's floor (docs/api.md, "Billing and limits": 7d 375, 30d and
 * 90d 750, all 1,500 records), with or without includeSignals (with it, the signals fee on top).
 */
export function maxLimitFor(r: JobRequest, available: Micro): number {
  if (r.kind === 'records') return Math.min(JOB_LIMIT_MAX, Math.floor(available / PRICES.record));
  if (r.kind !== 'insights') return 0;
  const depth = Math.min(JOB_LIMIT_MAX, Math.floor((available - (r.includeSignals ? PRICES.signals : 0)) / PRICES.insightRecord));
  return depth >= SIGNALS_FLOOR[r.window] ? depth : 0;
}
