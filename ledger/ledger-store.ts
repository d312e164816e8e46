// What the serving layer, the admin tools and the benches ask of the ledger, whichever engine
// keeps it: the append-only file ledger (file-ledger-store.ts, the embedded default) or PostgreSQL
// (postgres/pg-ledger-store.ts, chosen by DATABASE_URL; open-ledger-store.ts picks). Both keep the same
// semantics (docs/ledger.md): integer micro-credits, a hold before work, settled or released
// exactly once, available = balance - open holds, never negative; Idempotency-Key records kept at
// least 24 h. Every call is asynchronous, as a database round trip is.
import { createHash } from 'node:crypto';
import type { LedgerDump } from './admin/dump-format.ts';
import type { Credits, Micro } from './money.ts';
import type { IdempotencyWrite } from './log/records.ts';
import type { Account, ApiKey, Hold } from './log/state.ts';

export type { Account, ApiKey, Hold, IdempotencyWrite };

/** Money is integer micro-credits everywhere in the ledger; the names and the type say so. */
export type HoldResult =
  | { ok: true; hold: Hold; availableMicro: Micro }
  | { ok: false; code: 'insufficient_credits'; requiredMicro: Micro; availableMicro: Micro };

export interface Balance {
  balanceMicro: Micro;
  heldMicro: Micro;
  availableMicro: Micro;
}

export type IdempotencyCheck = { kind: 'new' } | { kind: 'replay'; response: unknown } | { kind: 'conflict' } | { kind: 'in_flight' };

/**
 * One entry of GET /usage as the API shows it: its names are the API's (docs/api.md), so the
 * amounts are typed `Credits` rather than named with their unit.
 */
export interface UsageEntry {
  id: string;
  /** A refund is a hold released whole: nothing was charged, nothing is paid back. */
  type: 'topup' | 'settlement' | 'refund';
  /** Credits this entry moved on the balance: added (top-up), charged (settlement), 0 (refund). */
  credits: Credits;
  /** The hold a settlement or refund resolved (null for a top-up). */
  held: Credits | null;
  /** Of the hold: charged, and released back to available (held = charged + released); null for a top-up. */
  charged: Credits | null;
  released: Credits | null;
  balanceAfter: Credits;
  keyId: string | null;
  ref: string | null;
  what: string | null;
  reason: string | null;
  at: string;
}

export interface UsagePage {
  entries: UsageEntry[];
  nextCursor: string | null;
}

export interface UsageQuery {
  cursor?: string | null;
  limit?: number;
  keyId?: string | null;
}

export type AccountView = Account & { availableMicro: Micro; keys: ApiKey[]; openHolds: number };

/** What /health shows of the ledger. */
export interface LedgerStatus {
  backend: 'file' | 'postgres';
  /** The last record (file) or usage entry (PostgreSQL) written. */
  lastSeq: number;
  openHolds: number;
  /** How long the open took (the file ledger's recovery), ms. */
  recoveredMs: number;
  /** The file ledger cut a torn tail at open. */
  tornTailCut: boolean;
  /** Releases and key aborts an outage kept from being written, waiting for the database (0 on the file ledger). */
  pendingWrites: number;
}

export interface HoldInput {
  account: string;
  key?: string | null;
  amountMicro: Micro;
  ref: string;
  what: string;
}

export interface LedgerStore {
  createAccount(name: string): Promise<Account>;
  /** Returns the secret once; only its SHA-256 is stored. */
  createKey(account: string, name?: string): Promise<{ key: ApiKey; secret: string }>;
  revokeKey(keyId: string): Promise<ApiKey>;
  topup(account: string, amountMicro: Micro, note?: string | null): Promise<Balance>;
  /** Reserve `amountMicro` before work runs; refused (nothing written) when available cannot cover it. */
  hold(p: HoldInput): Promise<HoldResult>;
  /** Charge `chargeMicro` (0..hold) and release the rest; with `idem`, the response is stored with it, atomically. */
  settle(holdId: string, chargeMicro: Micro, idem?: IdempotencyWrite): Promise<Balance & { chargedMicro: Micro }>;
  /** Release a whole hold (a refund): failed calls, searches handed to a job, recovery, expired leases. */
  release(holdId: string, reason: string): Promise<Balance>;
  /** Before work: is this (account, key) new, a replay, a conflicting reuse, or still running (here or on another replica)? */
  idempotencyBegin(account: string, key: string, bodyHash: string): Promise<IdempotencyCheck>;
  /** The request ended without a stored response (error, nothing charged): forget it was running. */
  idempotencyAbort(account: string, key: string): Promise<void>;
  balance(account: string): Promise<Balance>;
  getAccount(account: string): Promise<AccountView | null>;
  /** The key a secret belongs to (revoked keys included: the caller decides). */
  keyBySecret(secret: string): Promise<ApiKey | null>;
  openHolds(): Promise<Hold[]>;
  /** Every account's id, sorted (ledger export). */
  accountIds(): Promise<string[]>;
  keyByHash(hash: string): Promise<ApiKey | null>;
  /** Write a checked export (admin/ledger-dump.ts) as it was: ids, key hashes, times, entries; nothing held. */
  importHistory(d: LedgerDump): Promise<void>;
  /** Top-ups, settlements and refunds, newest first, `limit` at a time from an opaque cursor. */
  usage(account: string, q?: UsageQuery): Promise<UsagePage>;
  status(): Promise<LedgerStatus>;
  close(opts?: { checkpoint?: boolean }): Promise<void>;
}

export class LedgerError extends Error {
  constructor(
    readonly code: 'not_found' | 'hold_not_open' | 'invalid' | 'bad_cursor',
    message: string,
  ) {
    super(message);
  }
}

export const hashSecret = (secret: string) => createHash('sha256').update(secret, 'utf8').digest('hex');

/** Usage cursors: the listing's scope (an account or a key) and the position to go on from, opaque to clients. */
export const usageCursor = {
  scope: (account: string, keyId?: string | null) => (keyId ? `k:${keyId}` : `a:${account}`),
  encode: (scope: string, at: number) => Buffer.from(`${scope}|${at}`).toString('base64url'),
  /** The position, or null when the cursor is not one of this scope's. */
  decode(scope: string, cursor: string): number | null {
    const m = /^(.+)\|(\d+)$/.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
    return m && m[1] === scope ? Number(m[2]) : null;
  },
};

export const usageLimit = (limit: number | undefined) => Math.min(Math.max(limit ?? 50, 1), 500);
