// The credit ledger: the one place money lives. Two-phase transfers in the TigerBeetle manner
// (hold = pending; settle = post some or all, the rest voided; release = void; a hold resolves
// exactly once), over our own append-only, group-committed log (log/record-log.ts).
//
// Every operation validates, builds its record, applies it to the in-memory state and queues it,
// all synchronously (so two concurrent holds can never both spend the same credits), then
// resolves only once the record is durable. A single process writes a ledger directory: open()
// takes DATA_DIR/ledger/LOCK.
import path from 'node:path';
import { acquireLock, type Lock } from '../core/infra/lock.ts';
import { assertHoldInput, assertResolution } from './boundary.ts';
import { DAY_MS } from '../core/snapshots/windows.ts';
import { snapshot, writeCheckpoint } from './log/checkpoint.ts';
import { newId, newSecret } from './ids.ts';
import { recoverLog, type RecoveryReport } from './log/recovery.ts';
import { addMicro, assertMicro, subMicro, toCredits, ZERO_MICRO, type Micro } from './money.ts';
import type { LedgerDump } from './admin/dump-format.ts';
import { decodeRecord, encodeRecord, type IdempotencyWrite, type LedgerRecord, type RecordInput, type Resolution } from './log/records.ts';
import { RecordLog, type Location } from './log/record-log.ts';
import { idemKey, LedgerState, type Account, type ApiKey, type Hold } from './log/state.ts';
import {
  hashSecret,
  LedgerError,
  usageCursor,
  usageLimit,
  type AccountView,
  type Balance,
  type LedgerStore,
  type HoldInput,
  type HoldResult,
  type IdempotencyCheck,
  type LedgerStatus,
  type UsageEntry,
  type UsagePage,
  type UsageQuery,
} from './ledger-store.ts';

export type { Account, ApiKey, Hold, RecoveryReport };

interface LedgerOptions {
  dir: string;
  fileBytes?: number;
  groupCommit?: boolean;
  /** Write a checkpoint after this many records (0: only on close). */
  checkpointEvery?: number;
  /** How long idempotency records are honoured (at least 24 h). */
  idempotencyTtlMs?: number;
  now?: () => Date;
}

export class FileLedgerStore implements LedgerStore {
  private inFlight = new Set<string>();
  private clock = { ms: -1, iso: '' };
  private sinceCheckpoint = 0;
  private checkpointing: Promise<void> | null = null;
  private closed = false;

  private constructor(
    private readonly opts: Required<Omit<LedgerOptions, 'fileBytes' | 'groupCommit'>>,
    private readonly log: RecordLog,
    private readonly state: LedgerState,
    private readonly lock: Lock,
    readonly recovery: RecoveryReport,
  ) {}

  static async open(options: LedgerOptions): Promise<FileLedgerStore> {
    const t0 = performance.now();
    const opts = { checkpointEvery: 100_000, idempotencyTtlMs: 2 * DAY_MS, now: () => new Date(), ...options };
    if (opts.idempotencyTtlMs < DAY_MS) throw new LedgerError('invalid', 'idempotency records must be kept at least 24 h');
    const lock = await acquireLock(path.join(opts.dir, 'LOCK'));
    try {
      const { state, log, report } = await recoverLog(opts.dir, options);
      const ledger = new FileLedgerStore(opts as FileLedgerStore['opts'], log, state, lock, report);
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

  /** `at`: now, or an imported record's own time. */
  private write(input: RecordInput, at = this.timestamp()): { record: LedgerRecord; durable: Promise<void> } {
    if (this.closed) throw new LedgerError('invalid', 'ledger is closed');
    const record = { ...input, seq: this.state.lastSeq + 1, at } as LedgerRecord;
    const payload = encodeRecord(record);
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
    const secret = newSecret();
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

  async topup(account: string, amountMicro: Micro, note: string | null = null): Promise<Balance> {
    const a = this.mustAccount(account);
    assertMicro(amountMicro, 'top-up');
    if (amountMicro === 0) throw new LedgerError('invalid', 'top-up must be positive');
    const balanceAfterMicro = addMicro(a.balanceMicro, amountMicro);
    await this.write({ t: 'topup', id: newId('top'), account, amountMicro, note, balanceAfterMicro }).durable;
    return this.balanceNow(account);
  }

  /** Reserve `amountMicro` before work runs; refused (nothing written) when available cannot cover it. */
  async hold(p: HoldInput): Promise<HoldResult> {
    const a = this.mustAccount(p.account);
    assertMicro(p.amountMicro, 'hold');
    assertHoldInput(p);
    const availableMicro = subMicro(a.balanceMicro, a.heldMicro);
    if (p.amountMicro > availableMicro) return { ok: false, code: 'insufficient_credits', requiredMicro: p.amountMicro, availableMicro };
    const id = newId('hld');
    const { durable } = this.write({
      t: 'hold',
      id,
      account: a.id,
      key: p.key ?? null,
      amountMicro: p.amountMicro,
      ref: p.ref,
      what: p.what,
    });
    const hold = { ...this.state.holds.get(id)! };
    await durable;
    return { ok: true, hold, availableMicro: subMicro(a.balanceMicro, a.heldMicro) };
  }

  /** Charge `chargeMicro` (0..hold) and release the rest. With `idem`, the response is stored with it, atomically. */
  async settle(holdId: string, chargeMicro: Micro, idem?: IdempotencyWrite): Promise<Balance & { chargedMicro: Micro }> {
    const h = this.state.holds.get(holdId);
    try {
      if (!h) this.mustOpenHold(holdId);
      assertMicro(chargeMicro, 'settlement');
      assertResolution(holdId, chargeMicro, null);
      if (chargeMicro > h!.amountMicro)
        throw new LedgerError('invalid', `settlement of ${chargeMicro} exceeds the hold of ${h!.amountMicro}`);
      const a = this.state.accounts.get(h!.account)!;
      await this.write({
        t: 'settle',
        hold: holdId,
        amountMicro: chargeMicro,
        ...(idem ? { idem } : {}),
        ...this.resolution(h!, subMicro(a.balanceMicro, chargeMicro)),
      }).durable;
      return { ...this.balanceNow(a.id), chargedMicro: chargeMicro };
    } finally {
      // Stored (replays from now on) or failed (the caller may retry): either way no longer running.
      if (idem && h) this.inFlight.delete(idemKey(h.account, idem.key));
    }
  }

  /** Release a whole hold (a refund): failed calls, searches handed to a job, recovery. */
  async release(holdId: string, reason: string): Promise<Balance> {
    const h = this.mustOpenHold(holdId);
    assertResolution(holdId, null, reason);
    const a = this.state.accounts.get(h.account)!;
    await this.write({ t: 'release', hold: holdId, reason, ...this.resolution(h, a.balanceMicro) }).durable;
    return this.balanceNow(a.id);
  }

  private resolution(h: Hold, balanceAfterMicro: Micro): Resolution {
    return { account: h.account, key: h.key, heldMicro: h.amountMicro, ref: h.ref, what: h.what, balanceAfterMicro };
  }

  // ---- idempotency (Stripe / IETF Idempotency-Key semantics) ---------------------------------

  /** Before work: is this (account, key) new, a replay, a conflicting reuse, or still running? */
  async idempotencyBegin(account: string, key: string, bodyHash: string): Promise<IdempotencyCheck> {
    // No await before the key is marked running: nothing can slip between the check and the mark.
    const k = idemKey(account, key);
    if (this.inFlight.has(k)) return { kind: 'in_flight' };
    const e = this.state.idempotency.get(k);
    if (e && Date.parse(e.at) >= this.opts.now().getTime() - this.opts.idempotencyTtlMs) {
      if (e.bodyHash !== bodyHash) return { kind: 'conflict' };
      const rec = decodeRecord(this.log.read(e.location)) as Extract<LedgerRecord, { t: 'settle' }>;
      return { kind: 'replay', response: rec.idem!.response };
    }
    this.inFlight.add(k);
    return { kind: 'new' };
  }

  /** The request ended without a stored response (error, nothing charged): forget it was running. */
  async idempotencyAbort(account: string, key: string): Promise<void> {
    this.inFlight.delete(idemKey(account, key));
  }

  // ---- reads --------------------------------------------------------------------------------

  async balance(account: string): Promise<Balance> {
    return this.balanceNow(account);
  }

  private balanceNow(account: string): Balance {
    const a = this.mustAccount(account);
    return { balanceMicro: a.balanceMicro, heldMicro: a.heldMicro, availableMicro: subMicro(a.balanceMicro, a.heldMicro) };
  }

  async getAccount(account: string): Promise<AccountView | null> {
    const a = this.state.accounts.get(account);
    if (!a) return null;
    const keys = [...this.state.keys.values()].filter((k) => k.account === account).map((k) => ({ ...k }));
    const openHolds = [...this.state.holds.values()].filter((h) => h.account === account).length;
    return { ...a, availableMicro: subMicro(a.balanceMicro, a.heldMicro), keys, openHolds };
  }

  /** The key a secret belongs to (revoked keys included: the caller decides). */
  async keyBySecret(secret: string): Promise<ApiKey | null> {
    const k = this.state.keysByHash.get(hashSecret(secret));
    return k ? { ...k } : null;
  }

  async openHolds(): Promise<Hold[]> {
    return [...this.state.holds.values()].map((h) => ({ ...h }));
  }

  async accountIds(): Promise<string[]> {
    return [...this.state.accounts.keys()].sort();
  }

  async keyByHash(hash: string): Promise<ApiKey | null> {
    const k = this.state.keysByHash.get(hash);
    return k ? { ...k } : null;
  }

  /** The export's history as records with their own times; a settlement or refund is its hold and its resolution. */
  async importHistory(d: LedgerDump): Promise<void> {
    const durable: Array<Promise<void>> = [];
    const write = (r: RecordInput, at: string) => durable.push(this.write(r, at).durable);
    for (const a of d.accounts) write({ t: 'account', id: a.id, name: a.name }, a.createdAt);
    for (const k of d.keys) write({ t: 'key', id: k.id, account: k.account, name: k.name, hash: k.hash }, k.createdAt);
    for (const e of d.entries) {
      if (e.type === 'topup') {
        const r = {
          t: 'topup',
          id: e.ref ?? newId('top'),
          account: e.account,
          amountMicro: e.amountMicro,
          note: e.what,
          balanceAfterMicro: e.balanceAfterMicro,
        };
        write(r as RecordInput, e.at);
        continue;
      }
      const hold = { id: newId('hld'), account: e.account, key: e.keyId, amountMicro: e.heldMicro!, ref: e.ref ?? '', what: e.what ?? '' };
      write({ t: 'hold', ...hold }, e.at);
      const resolution = { hold: hold.id, account: e.account, key: e.keyId, heldMicro: hold.amountMicro, ref: hold.ref, what: hold.what };
      if (e.type === 'settlement')
        write({ t: 'settle', amountMicro: e.amountMicro, balanceAfterMicro: e.balanceAfterMicro, ...resolution }, e.at);
      else write({ t: 'release', reason: e.reason ?? 'refund', balanceAfterMicro: e.balanceAfterMicro, ...resolution }, e.at);
    }
    for (const k of d.keys) if (k.revokedAt) write({ t: 'revoke', key: k.id }, k.revokedAt);
    await Promise.all(durable);
  }

  get lastSeq(): number {
    return this.state.lastSeq;
  }

  async status(): Promise<LedgerStatus> {
    return {
      backend: 'file',
      lastSeq: this.state.lastSeq,
      openHolds: this.state.holds.size,
      recoveredMs: this.recovery.ms,
      tornTailCut: this.recovery.tornTail !== null,
      pendingWrites: 0,
    };
  }

  /** Top-ups, settlements and refunds, newest first, `limit` at a time from an opaque cursor. */
  async usage(account: string, q: UsageQuery = {}): Promise<UsagePage> {
    this.mustAccount(account);
    const limit = usageLimit(q.limit);
    let list = this.state.usageByAccount.get(account);
    const scope = usageCursor.scope(account, q.keyId);
    if (q.keyId) {
      const k = this.state.keys.get(q.keyId);
      if (!k || k.account !== account) throw new LedgerError('not_found', `no key ${q.keyId} on this account`);
      list = this.state.usageByKey.get(q.keyId);
    }
    let start = (list?.length ?? 0) - 1;
    if (q.cursor) {
      const at = usageCursor.decode(scope, q.cursor);
      if (at === null || at > start) throw new LedgerError('bad_cursor', 'invalid cursor');
      start = at;
    }
    const entries: UsageEntry[] = [];
    let i = start;
    for (; i >= 0 && entries.length < limit; i--) entries.push(this.usageEntry(list!.at(i)));
    return { entries, nextCursor: i >= 0 ? usageCursor.encode(scope, i) : null };
  }

  private usageEntry(loc: Location): UsageEntry {
    const r = decodeRecord(this.log.read(loc));
    const base = { id: `u_${r.seq}`, at: r.at };
    if (r.t === 'topup') {
      return {
        ...base,
        type: 'topup',
        credits: toCredits(r.amountMicro),
        held: null,
        charged: null,
        released: null,
        balanceAfter: toCredits(r.balanceAfterMicro),
        keyId: null,
        ref: r.id,
        what: r.note,
        reason: null,
      };
    }
    if (r.t === 'settle' || r.t === 'release') {
      const chargedMicro = r.t === 'settle' ? r.amountMicro : ZERO_MICRO;
      return {
        ...base,
        type: r.t === 'settle' ? 'settlement' : 'refund',
        credits: toCredits(chargedMicro),
        held: toCredits(r.heldMicro),
        charged: toCredits(chargedMicro),
        released: toCredits(subMicro(r.heldMicro, chargedMicro)),
        balanceAfter: toCredits(r.balanceAfterMicro),
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
