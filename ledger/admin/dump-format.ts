// The records of a ledger export (ledger-dump.ts writes and reads them; docs/ledger.md, "Moving a
// ledger"), apart from it so the ledger's interface (../ledger-store.ts) can name a dump without a
// loop back to the code that writes one.
import type { Micro } from '../money.ts';
import type { ApiKey } from '../log/state.ts';

export interface DumpAccount {
  t: 'account';
  id: string;
  name: string;
  createdAt: string;
  /** Top-ups minus settlements (micro-credits); the last entry's balanceAfter. */
  balanceMicro: Micro;
}
/** A key as the ledger keeps it (`hash`: SHA-256 of the secret, hex; never the secret). */
export interface DumpKey extends ApiKey {
  t: 'key';
}
export interface DumpEntry {
  t: 'entry';
  account: string;
  /** UsageEntry's type (ledger-store.ts): the compiler holds the two together where entries are dumped. */
  type: 'topup' | 'settlement' | 'refund';
  keyId: string | null;
  /** Added (top-up), charged (settlement), 0 (refund); micro-credits. */
  amountMicro: Micro;
  /** The hold a settlement or refund resolved (null for a top-up). */
  heldMicro: Micro | null;
  balanceAfterMicro: Micro;
  /** Top-up: its id; else the request's ref. */
  ref: string | null;
  /** Top-up: its note; else what the hold paid for. */
  what: string | null;
  reason: string | null;
  at: string;
}
export interface LedgerDump {
  accounts: DumpAccount[];
  keys: DumpKey[];
  /** Oldest first within each account. */
  entries: DumpEntry[];
}
