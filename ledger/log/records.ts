// The ledger's record types: the only things ever written. State is the fold of these records
// in order, so replaying the log reproduces every balance, hold and key exactly.
// Amounts are integer micro-credits and named so in memory (amountMicro, heldMicro,
// balanceAfterMicro); on disk they keep the log's own names (`amount`, `held`, `balanceAfter`) so
// every log ever written stays readable: encodeRecord and decodeRecord are the one place that
// knows those names. `at` is an ISO timestamp; `seq` is the record's position in the global order
// (assigned by the writer, strictly increasing).
import type { Micro } from '../money.ts';

export interface IdempotencyWrite {
  key: string;
  bodyHash: string;
  /** The response the client got, replayed verbatim on a retry. */
  response: unknown;
}

export type LedgerRecord =
  | { t: 'account'; seq: number; at: string; id: string; name: string }
  | { t: 'key'; seq: number; at: string; id: string; account: string; name: string; hash: string }
  | { t: 'revoke'; seq: number; at: string; key: string }
  | { t: 'topup'; seq: number; at: string; id: string; account: string; amountMicro: Micro; note: string | null; balanceAfterMicro: Micro }
  | { t: 'hold'; seq: number; at: string; id: string; account: string; key: string | null; amountMicro: Micro; ref: string; what: string }
  /** Charge `amountMicro` (<= the hold) and release the rest; optionally remember an idempotent response. */
  | ({ t: 'settle'; seq: number; at: string; hold: string; amountMicro: Micro; idem?: IdempotencyWrite } & Resolution)
  /** Release a whole hold: a refund. `reason` says why (failed, handed_to_job, recovery, ...). */
  | ({ t: 'release'; seq: number; at: string; hold: string; reason: string } & Resolution);

/**
 * What a usage listing shows about a resolved hold, copied from the hold when it resolves, so a
 * listing reads one record per entry. `balanceAfterMicro` is re-checked on every replay.
 */
export interface Resolution {
  account: string;
  key: string | null;
  heldMicro: Micro;
  ref: string;
  what: string;
  balanceAfterMicro: Micro;
}

export type RecordInput = LedgerRecord extends infer R ? (R extends LedgerRecord ? Omit<R, 'seq' | 'at'> : never) : never;

// In-memory name -> on-disk name, and back. Renaming key by key keeps the fields' order, so a
// record is written byte for byte as before.
const TO_DISK: Record<string, string> = { amountMicro: 'amount', heldMicro: 'held', balanceAfterMicro: 'balanceAfter' };
const FROM_DISK: Record<string, string> = Object.fromEntries(Object.entries(TO_DISK).map(([mem, disk]) => [disk, mem]));

function renamed(o: Record<string, unknown>, names: Record<string, string>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k in o) out[names[k] ?? k] = o[k];
  return out;
}

/** A record as the log stores it: its JSON, in UTF-8. */
export function encodeRecord(r: LedgerRecord): Buffer {
  return Buffer.from(JSON.stringify(renamed(r as unknown as Record<string, unknown>, TO_DISK)), 'utf8');
}

/** A stored record read back with its in-memory names. */
export function decodeRecord(payload: Buffer): LedgerRecord {
  return renamed(JSON.parse(payload.toString('utf8')) as Record<string, unknown>, FROM_DISK) as unknown as LedgerRecord;
}
