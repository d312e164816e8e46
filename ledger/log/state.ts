// The ledger's state: the fold of its records in order. `apply` is the only code that changes
// balances, used both live (right after a record is queued) and on replay, so the two can never
// disagree. It re-checks every invariant and throws on a record that breaks one: on replay that
// means the log is not a history this code could have written.
import { addMicro, subMicro, ZERO_MICRO, type Micro } from '../money.ts';
import type { LedgerRecord } from './records.ts';
import type { Location } from './record-log.ts';

export interface Account {
  id: string;
  name: string;
  createdAt: string;
  /** Top-ups minus settlements, in micro-credits. */
  balanceMicro: Micro;
  /** Sum of open holds, in micro-credits; available = balance - held, never negative. */
  heldMicro: Micro;
}

export interface ApiKey {
  id: string;
  account: string;
  name: string;
  hash: string;
  createdAt: string;
  revokedAt: string | null;
}

export interface Hold {
  id: string;
  account: string;
  key: string | null;
  amountMicro: Micro;
  ref: string;
  what: string;
  at: string;
}

export interface IdempotencyEntry {
  bodyHash: string;
  /** Location of the settle record holding the stored response. */
  location: Location;
  at: string;
}

class InvariantViolation extends Error {}

/** Growable list of record locations (numbers), cheap to keep for millions of entries. */
export class LocationList {
  private data = new Float64Array(16);
  length = 0;
  push(loc: number): void {
    if (this.length === this.data.length) {
      const next = new Float64Array(this.data.length * 2);
      next.set(this.data);
      this.data = next;
    }
    this.data[this.length++] = loc;
  }
  at(i: number): number {
    return this.data[i]!;
  }
  toFloat64(): Float64Array {
    return this.data.subarray(0, this.length);
  }
  static fromFloat64(xs: Float64Array): LocationList {
    const l = new LocationList();
    l.data = new Float64Array(Math.max(16, xs.length * 2));
    l.data.set(xs);
    l.length = xs.length;
    return l;
  }
}

export const idemKey = (account: string, key: string) => `${account}\u0000${key}`;

export class LedgerState {
  accounts = new Map<string, Account>();
  keys = new Map<string, ApiKey>();
  keysByHash = new Map<string, ApiKey>();
  holds = new Map<string, Hold>();
  /** Usage entries (top-ups, settlements, refunds) per account and per key, oldest first. */
  usageByAccount = new Map<string, LocationList>();
  usageByKey = new Map<string, LocationList>();
  idempotency = new Map<string, IdempotencyEntry>();
  lastSeq = 0;

  private account(id: string): Account {
    const a = this.accounts.get(id);
    if (!a) throw new InvariantViolation(`unknown account ${id}`);
    return a;
  }

  private usage(account: string, key: string | null, loc: Location): void {
    let l = this.usageByAccount.get(account);
    if (!l) this.usageByAccount.set(account, (l = new LocationList()));
    l.push(loc);
    if (key) {
      let k = this.usageByKey.get(key);
      if (!k) this.usageByKey.set(key, (k = new LocationList()));
      k.push(loc);
    }
  }

  /** Apply one record; returns the hold a settle/release resolved, for callers that report it. */
  apply(r: LedgerRecord, loc: Location): Hold | null {
    if (r.seq !== this.lastSeq + 1) throw new InvariantViolation(`record seq ${r.seq} after ${this.lastSeq}`);
    // Every case checks before it changes anything, so a refused record leaves no trace.
    const resolved = this.applyChecked(r, loc);
    this.lastSeq = r.seq;
    return resolved;
  }

  private applyChecked(r: LedgerRecord, loc: Location): Hold | null {
    switch (r.t) {
      case 'account':
        if (this.accounts.has(r.id)) throw new InvariantViolation(`duplicate account ${r.id}`);
        this.accounts.set(r.id, { id: r.id, name: r.name, createdAt: r.at, balanceMicro: ZERO_MICRO, heldMicro: ZERO_MICRO });
        return null;
      case 'key': {
        this.account(r.account);
        if (this.keys.has(r.id) || this.keysByHash.has(r.hash)) throw new InvariantViolation(`duplicate key ${r.id}`);
        const k: ApiKey = { id: r.id, account: r.account, name: r.name, hash: r.hash, createdAt: r.at, revokedAt: null };
        this.keys.set(k.id, k);
        this.keysByHash.set(k.hash, k);
        return null;
      }
      case 'revoke': {
        const k = this.keys.get(r.key);
        if (!k) throw new InvariantViolation(`unknown key ${r.key}`);
        k.revokedAt ??= r.at;
        return null;
      }
      case 'topup': {
        const a = this.account(r.account);
        if (!(r.amountMicro > 0)) throw new InvariantViolation(`top-up of ${r.amountMicro}`);
        this.checkBalance(r.seq, addMicro(a.balanceMicro, r.amountMicro), r.balanceAfterMicro);
        a.balanceMicro = addMicro(a.balanceMicro, r.amountMicro);
        this.usage(a.id, null, loc);
        return null;
      }
      case 'hold': {
        const a = this.account(r.account);
        if (this.holds.has(r.id)) throw new InvariantViolation(`duplicate hold ${r.id}`);
        if (!(r.amountMicro >= 0) || a.balanceMicro - a.heldMicro < r.amountMicro) {
          throw new InvariantViolation(`hold ${r.id} of ${r.amountMicro} exceeds available ${a.balanceMicro - a.heldMicro}`);
        }
        a.heldMicro = addMicro(a.heldMicro, r.amountMicro);
        this.holds.set(r.id, { id: r.id, account: a.id, key: r.key, amountMicro: r.amountMicro, ref: r.ref, what: r.what, at: r.at });
        return null;
      }
      case 'settle': {
        const h = this.holds.get(r.hold);
        if (!h) throw new InvariantViolation(`settle of hold ${r.hold}, which is not open`);
        if (!(r.amountMicro >= 0 && r.amountMicro <= h.amountMicro))
          throw new InvariantViolation(`settle of ${r.amountMicro} on a hold of ${h.amountMicro}`);
        const a = this.account(h.account);
        this.checkBalance(r.seq, subMicro(a.balanceMicro, r.amountMicro), r.balanceAfterMicro);
        a.heldMicro = subMicro(a.heldMicro, h.amountMicro);
        a.balanceMicro = subMicro(a.balanceMicro, r.amountMicro);
        this.holds.delete(h.id);
        this.usage(a.id, h.key, loc);
        if (r.idem) this.idempotency.set(idemKey(a.id, r.idem.key), { bodyHash: r.idem.bodyHash, location: loc, at: r.at });
        return h;
      }
      case 'release': {
        const h = this.holds.get(r.hold);
        if (!h) throw new InvariantViolation(`release of hold ${r.hold}, which is not open`);
        const a = this.account(h.account);
        this.checkBalance(r.seq, a.balanceMicro, r.balanceAfterMicro);
        a.heldMicro = subMicro(a.heldMicro, h.amountMicro);
        this.holds.delete(h.id);
        this.usage(a.id, h.key, loc);
        return h;
      }
    }
  }

  private checkBalance(seq: number, balance: Micro, recorded: Micro): void {
    if (balance !== recorded) throw new InvariantViolation(`record ${seq}: balance ${balance} but the record says ${recorded}`);
  }
}
