// One billed call against the ledger (docs/api.md, "Billing and limits"; docs/ledger.md): its
// Idempotency-Key claimed before any work (a replay answers from the response stored with the
// charge), the most it can cost held, then settled to what it delivered (the response stored with
// the charge, in the same ledger write) or its hold released whole. A search runs all of it within
// one request (search-route.ts, through `billed`); a job runs it in parts across its queue and
// restarts (job-runner.ts): it holds at submit and settles after its run, maybe in another process,
// so the open hold is a value the call is given back rather than one it must have placed itself.
import type Koa from 'koa';
import { LedgerError, type Balance, type LedgerStore, type Hold, type IdempotencyCheck } from '../../ledger/ledger-store.ts';
import { addMicro, subMicro, type Micro } from '../../ledger/money.ts';
import { HttpError } from '../http/http-error.ts';
import { creditHeaders, holdOr402, type HoldRequest } from './holds.ts';

/** The Idempotency-Key a call's charge is stored under, with the request it was first used for. */
interface CallKey {
  key: string;
  bodyHash: string;
}

type OpenHold = Pick<Hold, 'id' | 'amountMicro'>;

/** An HTTP answer stored with its settlement for Idempotency-Key replays: its JSON as sent (`body`: records of earlier versions). */
export interface StoredResponse {
  status: number;
  json?: string;
  body?: unknown;
  headers: Record<string, string>;
}

/** A key used again as the API words it (docs/api.md, "Idempotency"): another body is a 422, a first request still running a 409. */
export function keyRefusal(kind: 'conflict' | 'in_flight'): HttpError {
  return kind === 'conflict'
    ? new HttpError(422, { error: 'this Idempotency-Key was used with a different request body' })
    : new HttpError(409, { error: 'a request with this Idempotency-Key is still in progress' });
}

/** A hold already released under the call (recovery at a restart, or the lease of the replica that placed it ran out). */
export const isHoldGone = (err: unknown): boolean => err instanceof LedgerError && err.code === 'hold_not_open';

export class BilledCall {
  /** The key was claimed by this call and is neither settled nor forgotten yet. */
  private claimed = false;

  constructor(
    private readonly ledger: LedgerStore,
    readonly account: string,
    readonly idem: CallKey | null,
    /** The open hold: placed by `place`, or one placed earlier (a job's, kept in its record). */
    public hold: OpenHold | null = null,
  ) {}

  /** Claim the key before work: `new` (work may run; always so without a key), a stored response to replay, or the key busy or used otherwise. */
  async claim(): Promise<IdempotencyCheck> {
    if (!this.idem) return { kind: 'new' };
    const check = await this.ledger.idempotencyBegin(this.account, this.idem.key, this.idem.bodyHash);
    this.claimed = check.kind === 'new';
    return check;
  }

  /** `claim` for an HTTP call: the response to replay, or null when work may run; a busy or reused key is the 409 or 422. */
  async claimOrRefuse(): Promise<StoredResponse | null> {
    const check = await this.claim();
    if (check.kind === 'replay') return check.response as StoredResponse;
    if (check.kind !== 'new') throw keyRefusal(check.kind);
    return null;
  }

  /** Hold the most the call can cost, or throw the 402 (nothing written). */
  async place(r: Omit<HoldRequest, 'account'>): Promise<Hold> {
    const hold = await holdOr402(this.ledger, { ...r, account: this.account });
    this.hold = hold;
    return hold;
  }

  /** The billing headers a replay shows: the charge, and the available balance as it will be once it is settled. */
  async replayHeaders(chargeMicro: Micro): Promise<Record<string, string>> {
    const available = (await this.ledger.balance(this.account)).availableMicro;
    return creditHeaders(chargeMicro, subMicro(addMicro(available, this.open().amountMicro), chargeMicro));
  }

  /** Charge `chargeMicro` of the hold and release the rest; with a key, `response` is stored with the charge (what a replay answers). */
  async settle(chargeMicro: Micro, response?: unknown): Promise<Balance & { chargedMicro: Micro; headers: Record<string, string> }> {
    const idem = this.idem && response !== undefined ? { ...this.idem, response } : undefined;
    const settled = await this.ledger.settle(this.open().id, chargeMicro, idem);
    this.hold = null;
    if (idem) this.claimed = false;
    return { ...settled, headers: creditHeaders(settled.chargedMicro, settled.availableMicro) };
  }

  /** Release the whole hold, if one is open: nothing is charged. */
  async release(reason: string): Promise<void> {
    const hold = this.hold;
    if (!hold) return;
    this.hold = null;
    await this.ledger.release(hold.id, reason);
  }

  /** The call ends without a stored response: its key is free again. */
  async forget(): Promise<void> {
    if (!this.claimed) return;
    this.claimed = false;
    await this.ledger.idempotencyAbort(this.account, this.idem!.key);
  }

  private open(): OpenHold {
    if (!this.hold) throw new Error('a billed call settles only an open hold');
    return this.hold;
  }
}

/**
 * hold -> work -> settle, within one scope: `work` places the hold and settles (or releases) it
 * through `call`; whatever it throws releases the hold in full and frees the key, and is thrown on.
 */
export async function billed<T>(call: BilledCall, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    await call.release(err instanceof HttpError ? `error ${err.status}` : 'error').catch(() => undefined);
    await call.forget().catch(() => undefined);
    throw err;
  }
}

/** Answer a stored response again, marked as a replay. */
export function sendReplay(ctx: Koa.Context, r: StoredResponse): void {
  ctx.status = r.status;
  ctx.set(r.headers);
  ctx.set('Idempotent-Replayed', 'true');
  if (r.json === undefined) {
    ctx.body = r.body;
    return;
  }
  ctx.type = 'application/json';
  ctx.body = r.json;
}
