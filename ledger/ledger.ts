// The credit ledger: the one place money lives. Two-phase transfers in the TigerBeetle manner
// (hold = pending; settle = post some or all, the rest voided; release = void; a hold resolves
// exactly once), over our own append-only, group-committed log (segment-log.ts).
//
// Every operation validates, builds its record, applies it to the in-memory state and queues it,
// all synchronously (so two concurrent holds can never both spend the same credits), then
// resolves only once the record is durable. A single process writes a ledger directory: open()
// takes DATA_DIR/ledger/LOCK.
import { createHash, randomBytes } from 'node:crypto';
import path from 'node:path';
import { acquireLock, type Lock } from '../core/lock.ts';
import { DAY_MS } from '../core/windows.ts';
import { snapshot, writeCheckpoint } from './checkpoint.ts';
import { recoverLog, type RecoveryReport } from './recovery.ts';
import { assertMicro, toCredits } from './money.ts';
import type { IdempotencyWrite, LedgerRecord, RecordInput, Resolution } from './records.ts';
import { SegmentLog, type Location } from './segment-log.ts';
import { idemKey, LedgerState, type Account, type ApiKey, type Hold } from './state.ts';

export type { Account, ApiKey, Hold, RecoveryReport };

export interface LedgerOptions {
  dir: string;
  segmentBytes?: number;
  groupCommit?: boolean;
  /** Write a checkpoint after this many records (0: only on close). */
  checkpointEvery?: number;
  /** How long idempotency records are honoured (at least 24 h). */
  idempotencyTtlMs?: number;
  now?: () => Date;
}

/** Money is integer micro-credits everywhere in the ledger; the names say so. */
export type HoldResult =
  | { ok: true; hold: Hold; availableMicro: number }
  | { ok: false; code: 'insufficient_credits'; requiredMicro: number; availableMicro: number };

export interface Balance {
  balanceMicro: number;
  heldMicro: number;
  availableMicro: number;
}

export type IdempotencyCheck = { kind: 'new' } | { kind: 'replay'; response: unknown } | { kind: 'conflict' } | { kind: 'in_flight' };

export interface UsageEntry {
  id: string;
  /** A refund is a hold released whole: nothing was charged, nothing is paid back. */
  type: 'topup' | 'settlement' | 'refund';
  /** Credits this entry moved on the balance: added (top-up), charged (settlement), 0 (refund). */
  credits: number;
  /** The hold a settlement or refund resolved, in credits (null for a top-up). */
  held: number | null;
  /** Of the hold: charged, and released back to available (held = charged + released); null for a top-up. */
  charged: number | null;
  released: number | null;
  balanceAfter: number;
  keyId: string | null;
  ref: string | null;
  what: string | null;
  reason: string | null;
  at: string;
}

export class LedgerError extends Error {
  constructor(
    readonly code: 'not_found' | 'hold_not_open' | 'invalid' | 'bad_cursor',
    message: string,
  ) {
    super(message);
  }
}

// Ids come from a pooled random buffer: randomBytes() per id was a sixth of the hot path.
let pool = randomBytes(0);
let poolAt = 0;
function newId(prefix: string): string {
  if (poolAt + 12 > pool.length) {
    pool = randomBytes(12 * 1024);
    poolAt = 0;
  }
  poolAt += 12;
  return `${prefix}_${pool.toString('base64url', poolAt - 12, poolAt)}`;
}
export const hashSecret = (secret: string) => createHash('sha256').update(secret, 'utf8').digest('hex');

export class Ledger {
  private inFlight = new Set<string>();
  private clock = { ms: -1, iso: '' };
  private sinceCheckpoint = 0;
  private checkpointing: Promise<void> | null = null;
  private closed = false;

  private constructor(
    private readonly opts: Required<Omit<LedgerOptions, 'segmentBytes' | 'groupCommit'>>,
    private readonly log: SegmentLog,
    private readonly state: LedgerState,
    private readonly lock: Lock,
    readonly recovery: RecoveryReport,
  ) {}

  static async open(options: LedgerOptions): Promise<Ledger> {
    const t0 = performance.now();
    const opts = { checkpointEvery: 100_000, idempotencyTtlMs: 2 * DAY_MS, now: () => new Date(), ...options };
    if (opts.idempotencyTtlMs < DAY_MS) throw new LedgerError('invalid', 'idempotency records must be kept at least 24 h');
    const lock = await acquireLock(path.join(opts.dir, 'LOCK'));
    try {
      const { state, log, report } = await recoverLog(opts.dir, options);
      const ledger = new Ledger(opts as Ledger['opts'], log, state, lock, report);
      // The last step of recovery (docs/ledger.md, "Recovery"): holds left open by a crash belong
      // to requests that died with the process: refund them.
      const open = [...state.holds.values()];
      await Promise.all(open.map((h) => ledger.release(h.id, 'recovery')));
      report.releasedHolds = open.length;
      report.ms = performance.now() - t0;
      return ledger;
    } catch (err) {
      await lock.release();
      throw err;
    }
  }

  // ---- writes -------------------------------------------------------------------------------

  private write(input: RecordInput): { record: LedgerRecord; durable: Promise<void> } {
    if (this.closed) throw new LedgerError('invalid', 'ledger is closed');
    const record = { ...input, seq: this.state.lastSeq + 1, at: this.timestamp() } as LedgerRecord;
    const payload = Buffer.from(JSON.stringify(record), 'utf8');
    // Apply first (it validates invariants and may throw, before anything is queued), then queue
    // at the location the apply indexed. Both are synchronous: nothing can interleave.
    const { durable } = this.log.append(payload, (loc: Location) => this.state.apply(record, loc));
    this.sinceCheckpoint++;
    if (this.opts.checkpointEvery > 0 && this.sinceCheckpoint >= this.opts.checkpointEvery && !this.checkpointing) {
      this.checkpointing = this.checkpoint()
        .catch(() => {})
        .finally(() => (this.checkpointing = null));
    }
    return { record, durable };
  }

  /** ISO time of now, formatted once per millisecond (thousands of records share one). */
  private timestamp(): string {
    const ms = this.opts.now().getTime();
    if (ms !== this.clock.ms) this.clock = { ms, iso: new Date(ms).toISOString() };
    return this.clock.iso;
  }

  async createAccount(name: string): Promise<Account> {
    if (!name.trim()) throw new LedgerError('invalid', 'account name must not be empty');
    const id = newId('acc');
    const { durable } = this.write({ t: 'account', id, name: name.trim() });
    await durable;
    return { ...this.state.accounts.get(id)! };
  }

  /** Returns the secret once; only its SHA-256 is stored. */
  async createKey(account: string, name = 'default'): Promise<{ key: ApiKey; secret: string }> {
    this.mustAccount(account);
    const secret = `sk_${randomBytes(24).toString('base64url')}`;
    const id = newId('key');
    const { durable } = this.write({ t: 'key', id, account, name, hash: hashSecret(secret) });
    await durable;
    return { key: { ...this.state.keys.get(id)! }, secret };
  }

  async revokeKey(keyId: string): Promise<ApiKey> {
    const k = this.state.keys.get(keyId);
    if (!k) throw new LedgerError('not_found', `no key ${keyId}`);
    if (!k.revokedAt) await this.write({ t: 'revoke', key: keyId }).durable;
    return { ...k };
  }

  async topup(account: string, amountMicro: number, note: string | null = null): Promise<Balance> {
    const a = this.mustAccount(account);
    assertMicro(amountMicro, 'top-up');
    if (amountMicro === 0) throw new LedgerError('invalid', 'top-up must be positive');
    await this.write({ t: 'topup', id: newId('top'), account, amount: amountMicro, note, balanceAfter: a.balanceMicro + amountMicro })
      .durable;
    return this.balance(account);
  }

  /** Reserve `amountMicro` before work runs; refused (nothing written) when available cannot cover it. */
  async hold(p: { account: string; key?: string | null; amountMicro: number; ref: string; what: string }): Promise<HoldResult> {
    const a = this.mustAccount(p.account);
    assertMicro(p.amountMicro, 'hold');
    const availableMicro = a.balanceMicro - a.heldMicro;
    if (p.amountMicro > availableMicro) return { ok: false, code: 'insufficient_credits', requiredMicro: p.amountMicro, availableMicro };
    const id = newId('hld');
    const { durable } = this.write({ t: 'hold', id, account: a.id, key: p.key ?? null, amount: p.amountMicro, ref: p.ref, what: p.what });
    const hold = { ...this.state.holds.get(id)! };
    await durable;
    return { ok: true, hold, availableMicro: a.balanceMicro - a.heldMicro };
  }

  /** Charge `chargeMicro` (0..hold) and release the rest. With `idem`, the response is stored with it, atomically. */
  async settle(holdId: string, chargeMicro: number, idem?: IdempotencyWrite): Promise<Balance & { chargedMicro: number }> {
    const h = this.state.holds.get(holdId);
    try {
      if (!h) this.mustOpenHold(holdId);
      assertMicro(chargeMicro, 'settlement');
      if (chargeMicro > h!.amountMicro)
        throw new LedgerError('invalid', `settlement of ${chargeMicro} exceeds the hold of ${h!.amountMicro}`);
      const a = this.state.accounts.get(h!.account)!;
      await this.write({
        t: 'settle',
        hold: holdId,
        amount: chargeMicro,
        ...(idem ? { idem } : {}),
        ...this.resolution(h!, a.balanceMicro - chargeMicro),
      }).durable;
      return { ...this.balance(a.id), chargedMicro: chargeMicro };
    } finally {
      // Stored (replays from now on) or failed (the caller may retry): either way no longer running.
      if (idem && h) this.inFlight.delete(idemKey(h.account, idem.key));
    }
  }

  /** Release a whole hold (a refund): failed calls, searches handed to a job, recovery. */
  async release(holdId: string, reason: string): Promise<Balance> {
    const h = this.mustOpenHold(holdId);
    const a = this.state.accounts.get(h.account)!;
    await this.write({ t: 'release', hold: holdId, reason, ...this.resolution(h, a.balanceMicro) }).durable;
    return this.balance(a.id);
  }

  private resolution(h: Hold, balanceAfter: number): Resolution {
    return { account: h.account, key: h.key, held: h.amountMicro, ref: h.ref, what: h.what, balanceAfter };
  }

  // ---- idempotency (Stripe / IETF Idempotency-Key semantics) ---------------------------------

  /** Before work: is this (account, key) new, a replay, a conflicting reuse, or still running? */
  idempotencyBegin(account: string, key: string, bodyHash: string): IdempotencyCheck {
    const k = idemKey(account, key);
    if (this.inFlight.has(k)) return { kind: 'in_flight' };
    const e = this.state.idempotency.get(k);
    if (e && Date.parse(e.at) >= this.opts.now().getTime() - this.opts.idempotencyTtlMs) {
      if (e.bodyHash !== bodyHash) return { kind: 'conflict' };
      const rec = JSON.parse(this.log.read(e.location).toString('utf8')) as Extract<LedgerRecord, { t: 'settle' }>;
      return { kind: 'replay', response: rec.idem!.response };
    }
    this.inFlight.add(k);
    return { kind: 'new' };
  }

  /** The request ended without a stored response (error, nothing charged): forget it was running. */
  idempotencyAbort(account: string, key: string): void {
    this.inFlight.delete(idemKey(account, key));
  }

  // ---- reads --------------------------------------------------------------------------------

  balance(account: string): Balance {
    const a = this.mustAccount(account);
    return { balanceMicro: a.balanceMicro, heldMicro: a.heldMicro, availableMicro: a.balanceMicro - a.heldMicro };
  }

  getAccount(account: string): (Account & { availableMicro: number; keys: ApiKey[]; openHolds: number }) | null {
    const a = this.state.accounts.get(account);
    if (!a) return null;
    const keys = [...this.state.keys.values()].filter((k) => k.account === account).map((k) => ({ ...k }));
    const openHolds = [...this.state.holds.values()].filter((h) => h.account === account).length;
    return { ...a, availableMicro: a.balanceMicro - a.heldMicro, keys, openHolds };
  }

  /** The key a secret belongs to (revoked keys included: the caller decides). */
  keyBySecret(secret: string): ApiKey | null {
    const k = this.state.keysByHash.get(hashSecret(secret));
    return k ? { ...k } : null;
  }

  openHolds(): Hold[] {
    return [...this.state.holds.values()].map((h) => ({ ...h }));
  }

  get lastSeq(): number {
    return this.state.lastSeq;
  }

  /** Top-ups, settlements and refunds, newest first, `limit` at a time from an opaque cursor. */
  usage(
    account: string,
    q: { cursor?: string | null; limit?: number; keyId?: string | null } = {},
  ): { entries: UsageEntry[]; nextCursor: string | null } {
    this.mustAccount(account);
    const limit = Math.min(Math.max(q.limit ?? 50, 1), 500);
    let list = this.state.usageByAccount.get(account);
    const scope = q.keyId ? `k:${q.keyId}` : `a:${account}`;
    if (q.keyId) {
      const k = this.state.keys.get(q.keyId);
      if (!k || k.account !== account) throw new LedgerError('not_found', `no key ${q.keyId} on this account`);
      list = this.state.usageByKey.get(q.keyId);
    }
    let start = (list?.length ?? 0) - 1;
    if (q.cursor) {
      const m = /^(.+)\|(\d+)$/.exec(Buffer.from(q.cursor, 'base64url').toString('utf8'));
      if (!m || m[1] !== scope || Number(m[2]) > start) throw new LedgerError('bad_cursor', 'invalid cursor');
      start = Number(m[2]);
    }
    const entries: UsageEntry[] = [];
    let i = start;
    for (; i >= 0 && entries.length < limit; i--) entries.push(this.usageEntry(list!.at(i)));
    const nextCursor = i >= 0 ? Buffer.from(`${scope}|${i}`).toString('base64url') : null;
    return { entries, nextCursor };
  }

  private usageEntry(loc: Location): UsageEntry {
    const r = JSON.parse(this.log.read(loc).toString('utf8')) as LedgerRecord;
    const base = { id: `u_${r.seq}`, at: r.at };
    if (r.t === 'topup') {
      return {
        ...base,
        type: 'topup',
        credits: toCredits(r.amount),
        held: null,
        charged: null,
        released: null,
        balanceAfter: toCredits(r.balanceAfter),
        keyId: null,
        ref: r.id,
        what: r.note,
        reason: null,
      };
    }
    if (r.t === 'settle' || r.t === 'release') {
      const charged = r.t === 'settle' ? r.amount : 0;
      return {
        ...base,
        type: r.t === 'settle' ? 'settlement' : 'refund',
        credits: toCredits(charged),
        held: toCredits(r.held),
        charged: toCredits(charged),
        released: toCredits(r.held - charged),
        balanceAfter: toCredits(r.balanceAfter),
        keyId: r.key,
        ref: r.ref,
        what: r.what,
        reason: r.t === 'release' ? r.reason : null,
      };
    }
    throw new Error(`usage index points at a ${r.t} record`);
  }

  // ---- lifecycle ----------------------------------------------------------------------------

  /** Snapshot now (synchronously), write it once every record it covers is durable. */
  async checkpoint(): Promise<void> {
    const cutoff = new Date(this.opts.now().getTime() - this.opts.idempotencyTtlMs).toISOString();
    const json = snapshot(this.state, this.log.nextLocation(), cutoff);
    this.sinceCheckpoint = 0;
    await this.log.durableNow();
    await writeCheckpoint(this.opts.dir, json);
  }

  /** Wait for every queued record to be durable. */
  async flush(): Promise<void> {
    await this.log.drain();
  }

  async close(opts: { checkpoint?: boolean } = {}): Promise<void> {
    if (this.closed) return;
    await this.checkpointing;
    if (opts.checkpoint ?? true) await this.checkpoint().catch(() => {});
    this.closed = true;
    await this.log.close();
    await this.lock.release();
  }

  private mustAccount(id: string): Account {
    const a = this.state.accounts.get(id);
    if (!a) throw new LedgerError('not_found', `no account ${id}`);
    return a;
  }

  private mustOpenHold(id: string): Hold {
    const h = this.state.holds.get(id);
    if (!h) throw new LedgerError('hold_not_open', `hold ${id} is not open (unknown, or already settled or released)`);
    return h;
  }
}
