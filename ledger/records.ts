// The ledger's record types: the only things ever written. State is the fold of these records
// in order, so replaying the log reproduces every balance, hold and key exactly.
// Amounts (`amount`, `held`, `balanceAfter`) are integer micro-credits: the log's own names, kept as
// they are so every log ever written stays readable (in memory the names carry the unit:
// balanceMicro, amountMicro, ...); `at` is an ISO timestamp; `seq` is the record's position in
// the global order (assigned by the writer, strictly increasing).

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
  | { t: 'topup'; seq: number; at: string; id: string; account: string; amount: number; note: string | null; balanceAfter: number }
  | { t: 'hold'; seq: number; at: string; id: string; account: string; key: string | null; amount: number; ref: string; what: string }
  /** Charge `amount` (<= the hold) and release the rest; optionally remember an idempotent response. */
  | ({ t: 'settle'; seq: number; at: string; hold: string; amount: number; idem?: IdempotencyWrite } & Resolution)
  /** Release a whole hold: a refund. `reason` says why (failed, handed_to_job, recovery, ...). */
  | ({ t: 'release'; seq: number; at: string; hold: string; reason: string } & Resolution);

/**
 * What a usage listing shows about a resolved hold, copied from the hold when it resolves, so a
 * listing reads one record per entry. `balanceAfter` is re-checked on every replay.
 */
export interface Resolution {
  account: string;
  key: string | null;
  held: number;
  ref: string;
  what: string;
  balanceAfter: number;
}

export type RecordInput = LedgerRecord extends infer R ? (R extends LedgerRecord ? Omit<R, 'seq' | 'at'> : never) : never;
