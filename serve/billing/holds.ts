// Billing of a call against the ledger (docs/api.md, "Billing and limits"): hold the maximum cost before
// work, settle to what was delivered (storing the response with an Idempotency-Key), release the
// whole hold on failure. A refused hold is the 402 of docs/api.md; nothing is written for it.
import type { WindowKey } from '../../core/snapshots/windows.ts';
import type { Hold, LedgerStore } from '../../ledger/ledger-store.ts';
import { toCredits, type Credits, type Micro } from '../../ledger/money.ts';
import { HttpError } from '../http/http-error.ts';

export const CREDITS_USED_HEADER = 'X-Service-Credits-Used';
export const CREDITS_REMAINING_HEADER = 'X-Service-Credits-Remaining';

export interface InsufficientCredits {
  error: 'insufficient_credits';
  credits_required: Credits;
  credits_available: Credits;
  recommendations: { maxLimitForWindow: number; topUpUrl: string };
  tier: '1' | '2';
  window: WindowKey;
}

export interface HoldRequest {
  account: string;
  key: string;
  amountMicro: Micro;
  ref: string;
  what: string;
  /** For the 402 body. */
  window: WindowKey;
  tier: '1' | '2';
  /** Largest limit (or depth) the available balance covers, for the 402's recommendation. */
  maxLimit: (availableMicro: Micro) => number;
  topUpUrl: string;
}

/** Place the hold or throw the 402. */
export async function holdOr402(ledger: LedgerStore, r: HoldRequest): Promise<Hold> {
  const res = await ledger.hold({ account: r.account, key: r.key, amountMicro: r.amountMicro, ref: r.ref, what: r.what });
  if (res.ok) return res.hold;
  const body: InsufficientCredits = {
    error: 'insufficient_credits',
    credits_required: toCredits(res.requiredMicro),
    credits_available: toCredits(res.availableMicro),
    recommendations: { maxLimitForWindow: r.maxLimit(res.availableMicro), topUpUrl: r.topUpUrl },
    tier: r.tier,
    window: r.window,
  };
  throw new HttpError(402, body as unknown as Record<string, unknown>);
}

/** The billing headers of a settled call: credits charged, and the account's available balance after it. */
export function creditHeaders(chargedMicro: Micro, availableMicro: Micro): Record<string, string> {
  return { [CREDITS_USED_HEADER]: String(toCredits(chargedMicro)), [CREDITS_REMAINING_HEADER]: String(toCredits(availableMicro)) };
}
