// The credit ledger on PostgreSQL, for several API replicas over the same money (DATABASE_URL;
// docs/ledger.md, "PostgreSQL"; docs/scaling.md). The same semantics as the file ledger, held by
// the database instead of one process:
//   - money moves only in ledger.apply (migrations/001_ledger.sql): one transaction per batch of
//     operations, the touched account rows locked in id order, every check before every change;
//     CHECK constraints make an overdraft impossible whatever a replica sends;
//   - operations are batched per replica (batcher.ts): one commit for many, as the file ledger's
//     group commit does with fdatasync;
//   - a hold and a running Idempotency-Key belong to the replica that made them; a replica
//     heartbeats every lease/3, and whichever replica sees another's heartbeat older than the
//     lease releases its holds (reason 'lease_expired') and forgets its running keys;
//   - time is the database's (now()), one clock for every replica;
//   - what a request that ended could not write because the database was out of reach (its
//     hold's release, its Idempotency-Key's abort) is kept and written again every
//     OWED_RETRY_MS until it lands: the key is retryable and the hold refunded within about that
//     long once the database answers, on this live replica, with no lease to wait for.
import os from 'node:os';
import path from 'node:path';
import { assertHoldInput, assertResolution } from '../boundary.ts';
import { migrate } from '../../core/infra/postgres/migrate.ts';
import { createPool, inTransaction, type PgPool } from '../../core/infra/postgres/pool.ts';
import { DAY_MS } from '../../core/snapshots/windows.ts';
import {
  hashSecret,
  LedgerError,
  usageCursor,
  usageLimit,
  type Account,
  type AccountView,
  type ApiKey,
  type Balance,
  type LedgerStore,
  type Hold,
  type HoldInput,
  type HoldResult,
  type IdempotencyCheck,
  type IdempotencyWrite,
  type LedgerStatus,
  type UsageEntry,
  type UsagePage,
  type UsageQuery,
} from '../ledger-store.ts';
import { newId, newSecret } from '../ids.ts';
import type { LedgerDump } from '../admin/dump-format.ts';
import { assertMicro, subMicro, toCredits, ZERO_MICRO, type Micro } from '../money.ts';
import { Batcher } from './batcher.ts';
import { isConnectionLoss } from '../../core/infra/postgres/connection-loss.ts';

const LEDGER_SCHEMA = 'ledger';
const LEDGER_MIGRATIONS = path.join(import.meta.dirname, 'migrations');
/** A replica silent for this long has died: its holds are released (LEDGER_LEASE_MS). */
export const DEFAULT_LEASE_MS = 30_000;
/** How often writes an outage kept from the database are tried again (docs/ledger.md, "A database outage"). */
const OWED_RETRY_MS = 500;

interface PgLedgerOptions {
  databaseUrl: string;
  leaseMs?: number;
  /** How long Idempotency-Key records are honoured (at least 24 h; default 48 h, as the file ledger). */
  idempotencyTtlMs?: number;
  /** Connections (default 8). */
  poolSize?: number;
  /** Batches committing at once (default 2) and operations in one batch at most (default 512). */
  maxInFlight?: number;
  maxBatch?: number;
}

type Op =
  | { op: 'hold'; id: string; account: string; key: string | null; amountMicro: Micro; ref: string; what: string }
  | { op: 'settle'; hold: string; amountMicro: Micro; idem?: { key: string; bodyHash: string; response: string } }
  | { op: 'release'; hold: string; amountMicro: typeof ZERO_MICRO; reason: string }
  | { op: 'topup'; id: string; account: string; amountMicro: Micro; note: string | null };

interface OpResult {
  error: 'insufficient_credits' | 'not_found' | 'hold_not_open' | 'exceeds_hold' | null;
  /** The account's balance and held sum after the operation (before it, when refused for credits). */
  balanceMicro: Micro;
  heldMicro: Micro;
  at: Date;
}

/** ledger.apply's arguments: one array per field, an element per operation, and what to lock. */
function applyArgs(ops: Op[], replica: string): unknown[] {
  const n = ops.length;
  const col = () => new Array<string | null>(n).fill(null);
  const [kinds, ids, accts, keys, refs, whats, notes, ikeys, ihashes, iresps] = Array.from({ length: 10 }, col);
  const amounts = new Array<Micro>(n);
  const accounts = new Set<string>();
  const holds: string[] = [];
  ops.forEach((op, i) => {
    kinds![i] = op.op;
    amounts[i] = op.amountMicro;
    if (op.op === 'hold' || op.op === 'topup') {
      ids![i] = op.id;
      accts![i] = op.account;
      accounts.add(op.account);
      if (op.op === 'hold') ((keys![i] = op.key), (refs![i] = op.ref), (whats![i] = op.what));
      else notes![i] = op.note;
    } else {
      ids![i] = op.hold;
      holds.push(op.hold);
      if (op.op === 'release') notes![i] = op.reason;
      else if (op.idem) ((ikeys![i] = op.idem.key), (ihashes![i] = op.idem.bodyHash), (iresps![i] = op.idem.response));
    }
  });
  return [kinds, ids, accts, keys, amounts, refs, whats, notes, ikeys, ihashes, iresps, [...accounts], holds, replica];
}

interface EntryRow {
  seq: number;
  type: UsageEntry['type'];
  key_id: string | null;
  amount_micro: Micro;
  held_micro: Micro | null;
  ref: string | null;
  what: string | null;
  reason: string | null;
  balance_after: Micro;
  at: Date;
}

const iso = (t: Date | string) => new Date(t).toISOString();
const balanceOf = (r: { balanceMicro: Micro; heldMicro: Micro }): Balance => ({
  balanceMicro: r.balanceMicro,
  heldMicro: r.heldMicro,
  availableMicro: subMicro(r.balanceMicro, r.heldMicro),
});

export class PgLedgerStore implements LedgerStore {
  private readonly batcher: Batcher<Op, OpResult>;
  private timer: NodeJS.Timeout | null = null;
  private reaping: Promise<void> | null = null;
  private closed = false;
  /** close() began: no more heartbeats. */
  private stopping = false;
  private openedMs = 0;
  /** Writes owed to the database, by what they are for ("release <hold>", "abort <account> <key>"). */
  private readonly owed = new Map<string, () => Promise<unknown>>();
  private owedTimer: NodeJS.Timeout | null = null;
  /** Since when the heartbeats have kept succeeding (null: the last one failed). */
  private connectedSince: number | null = Date.now();
  private paying: Promise<void> | null = null;

  private constructor(
    private readonly pool: PgPool,
    readonly replicaId: string,
    private readonly leaseMs: number,
    private readonly ttlMs: number,
    o: PgLedgerOptions,
  ) {
    this.batcher = new Batcher(
      (ops) => this.commit(ops),
      o.maxInFlight ?? 2,
      o.maxBatch ?? 512,
      (op) => ('hold' in op ? op.hold : null),
    );
  }

  static async open(o: PgLedgerOptions): Promise<PgLedgerStore> {
    const t0 = performance.now();
    const ttl = o.idempotencyTtlMs ?? 2 * DAY_MS;
    if (ttl < DAY_MS) throw new LedgerError('invalid', 'idempotency records must be kept at least 24 h');
    const pool = createPool(o.databaseUrl, { max: o.poolSize ?? 8, applicationName: 'content-intelligence ledger' });
    try {
      await migrate(pool, LEDGER_SCHEMA, LEDGER_MIGRATIONS);
      const id = newId('rep');
      await pool.query('INSERT INTO ledger.replicas (id, host, pid) VALUES ($1, $2, $3)', [id, os.hostname(), process.pid]);
      const leaseMs = o.leaseMs ?? DEFAULT_LEASE_MS;
      const ledger = new PgLedgerStore(pool, id, leaseMs, ttl, o);
      await ledger.reap();
      ledger.schedule(ledger.beatMs);
      ledger.openedMs = performance.now() - t0;
      return ledger;
    } catch (err) {
      await pool.end().catch(() => undefined);
      throw err;
    }
  }

  // ---- money: every change goes through ledger.apply, batched --------------------------------

  private async commit(ops: Op[]): Promise<OpResult[]> {
    try {
      const { rows } = await this.pool.query<{ errors: OpResult['error'][]; balances: Micro[]; helds: Micro[]; stamp: Date }>(
        'SELECT * FROM ledger.apply($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)',
        applyArgs(ops, this.replicaId),
      );
      const r = rows[0]!;
      return ops.map((_, i) => ({ error: r.errors[i]!, balanceMicro: r.balances[i]!, heldMicro: r.helds[i]!, at: r.stamp }));
    } catch (err) {
      // The batch may or may not have committed (a connection lost after COMMIT was sent): a hold
      // the caller will never use would stay open under this live replica, so release each now
      // (a no-op for one that was never written).
      for (const op of ops) if (op.op === 'hold') this.owe(`release ${op.id}`, () => this.releaseOnce(op.id, 'uncertain'));
      throw err;
    }
  }

  private apply(op: Op): Promise<OpResult> {
    if (this.closed) return Promise.reject(new LedgerError('invalid', 'ledger is closed'));
    return this.batcher.submit(op);
  }

  private static failure(r: OpResult, what: string): never {
    if (r.error === 'not_found') throw new LedgerError('not_found', `no account ${what}`);
    if (r.error === 'hold_not_open')
      throw new LedgerError('hold_not_open', `hold ${what} is not open (unknown, or already settled or released)`);
    if (r.error === 'exceeds_hold') throw new LedgerError('invalid', `settlement exceeds the hold ${what}`);
    throw new LedgerError('invalid', `ledger refused the operation on ${what}: ${r.error}`);
  }

  async topup(account: string, amountMicro: Micro, note: string | null = null): Promise<Balance> {
    assertMicro(amountMicro, 'top-up');
    if (amountMicro === 0) throw new LedgerError('invalid', 'top-up must be positive');
    const r = await this.apply({ op: 'topup', id: newId('top'), account, amountMicro, note });
    if (r.error) PgLedgerStore.failure(r, account);
    return balanceOf(r);
  }

  async hold(p: HoldInput): Promise<HoldResult> {
    assertMicro(p.amountMicro, 'hold');
    assertHoldInput(p);
    const id = newId('hld');
    const key = p.key ?? null;
    const r = await this.apply({ op: 'hold', id, account: p.account, key, amountMicro: p.amountMicro, ref: p.ref, what: p.what });
    if (r.error === 'insufficient_credits')
      return {
        ok: false,
        code: 'insufficient_credits',
        requiredMicro: p.amountMicro,
        availableMicro: subMicro(r.balanceMicro, r.heldMicro),
      };
    if (r.error) PgLedgerStore.failure(r, p.account);
    const hold: Hold = { id, account: p.account, key, amountMicro: p.amountMicro, ref: p.ref, what: p.what, at: iso(r.at) };
    return { ok: true, hold, availableMicro: subMicro(r.balanceMicro, r.heldMicro) };
  }

  async settle(holdId: string, chargeMicro: Micro, idem?: IdempotencyWrite): Promise<Balance & { chargedMicro: Micro }> {
    assertMicro(chargeMicro, 'settlement');
    assertResolution(holdId, chargeMicro, null);
    const r = await this.apply({
      op: 'settle',
      hold: holdId,
      amountMicro: chargeMicro,
      ...(idem ? { idem: { key: idem.key, bodyHash: idem.bodyHash, response: JSON.stringify(idem.response) } } : {}),
    });
    if (r.error) PgLedgerStore.failure(r, holdId);
    return { ...balanceOf(r), chargedMicro: chargeMicro };
  }

  async release(holdId: string, reason: string): Promise<Balance> {
    assertResolution(holdId, null, reason);
    let r: OpResult;
    try {
      r = await this.apply({ op: 'release', hold: holdId, amountMicro: ZERO_MICRO, reason });
    } catch (err) {
      // The request ends either way: its hold is released once the database answers.
      if (isConnectionLoss(err)) this.owe(`release ${holdId}`, () => this.releaseOnce(holdId, reason));
      throw err;
    }
    if (r.error) PgLedgerStore.failure(r, holdId);
    return balanceOf(r);
  }

  /** A release written later: one already settled or released (found not open) is as good as done. */
  private async releaseOnce(holdId: string, reason: string): Promise<void> {
    await this.apply({ op: 'release', hold: holdId, amountMicro: ZERO_MICRO, reason });
  }

  // ---- writes an outage kept from the database -----------------------------------------------

  private owe(what: string, write: () => Promise<unknown>): void {
    if (this.closed) return;
    this.owed.set(what, write);
    this.owedTimer ??= setInterval(() => void this.payOwed(), OWED_RETRY_MS);
    this.owedTimer.unref();
  }

  /** Write what is owed, in order; stops at the first that finds the database still away. */
  private payOwed(): Promise<void> {
    this.paying ??= (async () => {
      for (const [what, write] of [...this.owed]) {
        try {
          await write();
        } catch (err) {
          if (isConnectionLoss(err)) return;
          // Refused for good (not a connection problem): nothing later would make it land.
        }
        this.owed.delete(what);
      }
      if (this.owed.size === 0 && this.owedTimer) {
        clearInterval(this.owedTimer);
        this.owedTimer = null;
      }
    })().finally(() => (this.paying = null));
    return this.paying;
  }

  // ---- accounts and keys ---------------------------------------------------------------------

  async createAccount(name: string): Promise<Account> {
    if (!name.trim()) throw new LedgerError('invalid', 'account name must not be empty');
    const { rows } = await this.pool.query<{ id: string; name: string; created_at: Date }>(
      'INSERT INTO ledger.accounts (id, name) VALUES ($1, $2) RETURNING id, name, created_at',
      [newId('acc'), name.trim()],
    );
    const a = rows[0]!;
    return { id: a.id, name: a.name, createdAt: iso(a.created_at), balanceMicro: ZERO_MICRO, heldMicro: ZERO_MICRO };
  }

  async createKey(account: string, name = 'default'): Promise<{ key: ApiKey; secret: string }> {
    const secret = newSecret();
    const { rows } = await this.pool.query<KeyRow>(
      `INSERT INTO ledger.api_keys (id, account_id, name, hash)
       SELECT $1, id, $3, $4 FROM ledger.accounts WHERE id = $2 RETURNING ${KEY_COLUMNS}`,
      [newId('key'), account, name, hashSecret(secret)],
    );
    if (!rows[0]) throw new LedgerError('not_found', `no account ${account}`);
    return { key: keyOf(rows[0]), secret };
  }

  async revokeKey(keyId: string): Promise<ApiKey> {
    const { rows } = await this.pool.query<KeyRow>(
      `UPDATE ledger.api_keys SET revoked_at = coalesce(revoked_at, now()) WHERE id = $1 RETURNING ${KEY_COLUMNS}`,
      [keyId],
    );
    if (!rows[0]) throw new LedgerError('not_found', `no key ${keyId}`);
    return keyOf(rows[0]);
  }

  async keyBySecret(secret: string): Promise<ApiKey | null> {
    const { rows } = await this.pool.query<KeyRow>(`SELECT ${KEY_COLUMNS} FROM ledger.api_keys WHERE hash = $1`, [hashSecret(secret)]);
    return rows[0] ? keyOf(rows[0]) : null;
  }

  // ---- idempotency ---------------------------------------------------------------------------

  async idempotencyBegin(account: string, key: string, bodyHash: string): Promise<IdempotencyCheck> {
    // Claim the key: new, or taking over a stored response past its TTL, or a running one whose
    // replica is gone (claimed over a lease ago: after an outage every heartbeat is old for a moment,
    // and a key claimed since belongs to a replica that is running it). One statement, so two replicas can never both claim it. A key this replica
    // still owes the abort of (its request ended in an outage) is freed first: the retry runs.
    if (this.owed.has(abortOf(account, key))) await this.payOwed();
    for (let attempt = 0; attempt < 3; attempt++) {
      const claimed = await this.pool.query(
        `INSERT INTO ledger.idempotency AS i (account_id, key, body_hash, replica_id) VALUES ($1, $2, $3, $4)
         ON CONFLICT (account_id, key) DO UPDATE SET body_hash = EXCLUDED.body_hash, replica_id = EXCLUDED.replica_id, response = NULL, at = now()
         WHERE (i.response IS NOT NULL AND i.at < now() - make_interval(secs => $5 / 1000.0))
            OR (i.response IS NULL AND i.at < now() - make_interval(secs => $6 / 1000.0) AND NOT EXISTS (
                  SELECT 1 FROM ledger.replicas r WHERE r.id = i.replica_id AND r.heartbeat_at >= now() - make_interval(secs => $6 / 1000.0)))
         RETURNING 1`,
        [account, key, bodyHash, this.replicaId, this.ttlMs, this.leaseMs],
      );
      if (claimed.rowCount === 1) return { kind: 'new' };
      const { rows } = await this.pool.query<{ body_hash: string; response: string | null }>(
        'SELECT body_hash, response FROM ledger.idempotency WHERE account_id = $1 AND key = $2',
        [account, key],
      );
      const e = rows[0];
      if (!e) continue; // aborted between the two statements: claim again
      if (e.response === null) return { kind: 'in_flight' };
      if (e.body_hash !== bodyHash) return { kind: 'conflict' };
      return { kind: 'replay', response: JSON.parse(e.response) as unknown };
    }
    return { kind: 'in_flight' };
  }

  async idempotencyAbort(account: string, key: string): Promise<void> {
    const abort = () =>
      this.pool.query('DELETE FROM ledger.idempotency WHERE account_id = $1 AND key = $2 AND response IS NULL AND replica_id = $3', [
        account,
        key,
        this.replicaId,
      ]);
    try {
      await abort();
    } catch (err) {
      // The request ended: its key is freed once the database answers (a retry meanwhile is told it runs).
      if (isConnectionLoss(err)) this.owe(abortOf(account, key), abort);
      throw err;
    }
  }

  // ---- reads ---------------------------------------------------------------------------------

  async balance(account: string): Promise<Balance> {
    const { rows } = await this.pool.query<{ balanceMicro: Micro; heldMicro: Micro }>(
      'SELECT balance_micro AS "balanceMicro", held_micro AS "heldMicro" FROM ledger.accounts WHERE id = $1',
      [account],
    );
    if (!rows[0]) throw new LedgerError('not_found', `no account ${account}`);
    return balanceOf(rows[0]);
  }

  async getAccount(account: string): Promise<AccountView | null> {
    const { rows } = await this.pool.query<{
      id: string;
      name: string;
      created_at: Date;
      balance_micro: Micro;
      held_micro: Micro;
      open_holds: number;
    }>(
      `SELECT id, name, created_at, balance_micro, held_micro,
              (SELECT count(*) FROM ledger.holds h WHERE h.account_id = a.id) AS open_holds
       FROM ledger.accounts a WHERE id = $1`,
      [account],
    );
    const a = rows[0];
    if (!a) return null;
    const keys = await this.pool.query<KeyRow>(`SELECT ${KEY_COLUMNS} FROM ledger.api_keys WHERE account_id = $1 ORDER BY created_at, id`, [
      account,
    ]);
    return {
      id: a.id,
      name: a.name,
      createdAt: iso(a.created_at),
      balanceMicro: a.balance_micro,
      heldMicro: a.held_micro,
      availableMicro: subMicro(a.balance_micro, a.held_micro),
      keys: keys.rows.map(keyOf),
      openHolds: a.open_holds,
    };
  }

  async openHolds(): Promise<Hold[]> {
    const { rows } = await this.pool.query<{
      id: string;
      account_id: string;
      key_id: string | null;
      amount_micro: Micro;
      ref: string;
      what: string;
      at: Date;
    }>('SELECT id, account_id, key_id, amount_micro, ref, what, at FROM ledger.holds ORDER BY at, id');
    return rows.map((h) => ({
      id: h.id,
      account: h.account_id,
      key: h.key_id,
      amountMicro: h.amount_micro,
      ref: h.ref,
      what: h.what,
      at: iso(h.at),
    }));
  }

  /** The identity this database's ledger was made with (migrations/002_identity.sql). */
  async ledgerId(): Promise<string> {
    return (await this.pool.query<{ id: string }>('SELECT id FROM ledger.identity')).rows[0]!.id;
  }

  async accountIds(): Promise<string[]> {
    return (await this.pool.query<{ id: string }>('SELECT id FROM ledger.accounts ORDER BY id COLLATE "C"')).rows.map((r) => r.id);
  }

  async keyByHash(hash: string): Promise<ApiKey | null> {
    const { rows } = await this.pool.query<KeyRow>(`SELECT ${KEY_COLUMNS} FROM ledger.api_keys WHERE hash = $1`, [hash]);
    return rows[0] ? keyOf(rows[0]) : null;
  }

  /** The export's rows in one transaction: accounts at their balance, keys, entries (a new hold id each) in order. */
  async importHistory(d: LedgerDump): Promise<void> {
    const cols = <T, K extends keyof T>(rows: T[], ...keys: K[]) => keys.map((k) => rows.map((r) => r[k]));
    await inTransaction(this.pool, async (client) => {
      await client.query(
        'INSERT INTO ledger.accounts (id, name, created_at, balance_micro) SELECT * FROM unnest($1::text[], $2::text[], $3::timestamptz[], $4::bigint[])',
        cols(d.accounts, 'id', 'name', 'createdAt', 'balanceMicro'),
      );
      await client.query(
        `INSERT INTO ledger.api_keys (id, account_id, name, hash, created_at, revoked_at)
         SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::timestamptz[], $6::timestamptz[])`,
        cols(d.keys, 'id', 'account', 'name', 'hash', 'createdAt', 'revokedAt'),
      );
      for (let i = 0; i < d.entries.length; i += 5000) {
        const chunk = d.entries.slice(i, i + 5000).map((e) => ({ ...e, hold: e.type === 'topup' ? null : newId('hld') }));
        await client.query(
          `INSERT INTO ledger.entries (type, account_id, key_id, hold_id, amount_micro, held_micro, ref, what, reason, balance_after, at)
           SELECT t, a, k, h, m, hm, r, w, re, b, at
             FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::bigint[], $6::bigint[], $7::text[], $8::text[], $9::text[],
                         $10::bigint[], $11::timestamptz[]) WITH ORDINALITY AS u(t, a, k, h, m, hm, r, w, re, b, at, n) ORDER BY n`,
          cols(chunk, 'type', 'account', 'keyId', 'hold', 'amountMicro', 'heldMicro', 'ref', 'what', 'reason', 'balanceAfterMicro', 'at'),
        );
      }
    });
  }

  async usage(account: string, q: UsageQuery = {}): Promise<UsagePage> {
    const limit = usageLimit(q.limit);
    const scope = usageCursor.scope(account, q.keyId);
    if (q.keyId) {
      const k = await this.pool.query('SELECT 1 FROM ledger.api_keys WHERE id = $1 AND account_id = $2', [q.keyId, account]);
      if (k.rowCount === 0) throw new LedgerError('not_found', `no key ${q.keyId} on this account`);
    } else {
      await this.balance(account);
    }
    let upTo = Number.MAX_SAFE_INTEGER;
    if (q.cursor) {
      const at = usageCursor.decode(scope, q.cursor);
      if (at === null) throw new LedgerError('bad_cursor', 'invalid cursor');
      upTo = at;
    }
    const { rows } = await this.pool.query<EntryRow>(
      `SELECT seq, type, key_id, amount_micro, held_micro, ref, what, reason, balance_after, at FROM ledger.entries
       WHERE account_id = $1 AND ($2::text IS NULL OR key_id = $2) AND seq <= $3 ORDER BY seq DESC LIMIT $4`,
      [account, q.keyId ?? null, upTo, limit + 1],
    );
    const entries = rows.slice(0, limit).map(usageEntry);
    return { entries, nextCursor: rows.length > limit ? usageCursor.encode(scope, rows[limit]!.seq) : null };
  }

  async status(): Promise<LedgerStatus> {
    const { rows } = await this.pool.query<{ last_seq: number; open_holds: number }>(
      'SELECT (SELECT coalesce(max(seq), 0) FROM ledger.entries) AS last_seq, (SELECT count(*) FROM ledger.holds) AS open_holds',
    );
    return {
      backend: 'postgres',
      lastSeq: rows[0]!.last_seq,
      openHolds: rows[0]!.open_holds,
      recoveredMs: this.openedMs,
      tornTailCut: false,
      pendingWrites: this.owed.size,
    };
  }

  // ---- leases --------------------------------------------------------------------------------

  private get beatMs(): number {
    return Math.max(10, Math.floor(this.leaseMs / 3));
  }

  private schedule(ms: number): void {
    if (this.closed || this.stopping) return;
    this.timer = setTimeout(() => void this.tick(), ms);
    this.timer.unref();
  }

  /**
   * The heartbeat, then the sweep of dead replicas. A heartbeat that fails (the database away) is
   * tried again every OWED_RETRY_MS, so that once it answers this replica is seen alive within
   * about that long, not a beat later. And a replica sweeps only once it has itself been connected
   * for a whole lease: after an outage every heartbeat is old, and the first replica back must not
   * take the others, alive and about to beat, for dead (their running keys would be claimed twice).
   */
  private async tick(): Promise<void> {
    if (this.closed || this.stopping || this.reaping) return;
    let beat = false;
    this.reaping = (async () => {
      // Re-registers if another replica took this one for dead (its holds are then already released).
      await this.pool.query(
        `INSERT INTO ledger.replicas (id, host, pid) VALUES ($1, $2, $3) ON CONFLICT (id) DO UPDATE SET heartbeat_at = now()`,
        [this.replicaId, os.hostname(), process.pid],
      );
      beat = true;
      this.connectedSince ??= Date.now();
      if (Date.now() - this.connectedSince >= this.leaseMs) await this.reap();
    })()
      .catch(() => undefined)
      .finally(() => (this.reaping = null));
    await this.reaping;
    if (!beat) this.connectedSince = null;
    this.schedule(beat ? this.beatMs : OWED_RETRY_MS);
  }

  /**
   * Release the holds of replicas silent for longer than the lease, forget their running keys
   * and the stored responses past their TTL; returns the holds released. Any replica may run it,
   * several at once: a hold is released once (the others find it no longer open).
   */
  async reap(): Promise<number> {
    const lease = [this.leaseMs];
    const alive = `SELECT id FROM ledger.replicas WHERE heartbeat_at >= now() - make_interval(secs => $1 / 1000.0)`;
    const { rows } = await this.pool.query<{ id: string }>(`SELECT id FROM ledger.holds WHERE replica_id NOT IN (${alive})`, lease);
    let released = 0;
    for (const h of rows) {
      const r = await this.apply({ op: 'release', hold: h.id, amountMicro: ZERO_MICRO, reason: 'lease_expired' });
      if (!r.error) released++;
    }
    await this.pool.query(
      `DELETE FROM ledger.idempotency WHERE response IS NULL AND at < now() - make_interval(secs => $1 / 1000.0) AND replica_id NOT IN (${alive})`,
      lease,
    );
    await this.pool.query(`DELETE FROM ledger.idempotency WHERE response IS NOT NULL AND at < now() - make_interval(secs => $1 / 1000.0)`, [
      this.ttlMs,
    ]);
    await this.pool.query(
      `DELETE FROM ledger.replicas r WHERE r.id NOT IN (${alive}) AND NOT EXISTS (SELECT 1 FROM ledger.holds h WHERE h.replica_id = r.id)`,
      lease,
    );
    return released;
  }

  // ---- lifecycle -----------------------------------------------------------------------------

  /**
   * Stop: the holds still open here are released now (as the file ledger's next open would), the
   * running keys forgotten, the replica unregistered; with the database away, left to the reaper.
   */
  async close(): Promise<void> {
    if (this.closed || this.stopping) return;
    this.stopping = true;
    if (this.timer) clearTimeout(this.timer);
    await this.reaping;
    await this.payOwed();
    if (this.owedTimer) clearInterval(this.owedTimer);
    try {
      const { rows } = await this.pool.query<{ id: string }>('SELECT id FROM ledger.holds WHERE replica_id = $1', [this.replicaId]);
      await Promise.all(
        rows.map((h) => this.apply({ op: 'release', hold: h.id, amountMicro: ZERO_MICRO, reason: 'shutdown' }).catch(() => undefined)),
      );
      await this.pool.query('DELETE FROM ledger.idempotency WHERE response IS NULL AND replica_id = $1', [this.replicaId]);
      await this.pool.query('DELETE FROM ledger.replicas WHERE id = $1', [this.replicaId]);
    } catch {
      // The database is away: a stop must still stop. What this replica held is then released by
      // another replica's reaper once its lease lapses, as after a crash (docs/ledger.md).
    } finally {
      this.closed = true;
      await this.pool.end();
    }
  }
}

const abortOf = (account: string, key: string) => `abort ${account} ${key}`;

interface KeyRow {
  id: string;
  account_id: string;
  name: string;
  hash: string;
  created_at: Date;
  revoked_at: Date | null;
}
const KEY_COLUMNS = 'id, account_id, name, hash, created_at, revoked_at';
const keyOf = (k: KeyRow): ApiKey => ({
  id: k.id,
  account: k.account_id,
  name: k.name,
  hash: k.hash,
  createdAt: iso(k.created_at),
  revokedAt: k.revoked_at ? iso(k.revoked_at) : null,
});

function usageEntry(r: EntryRow): UsageEntry {
  // The file ledger's fields in its order, so /usage reads the same on either backend.
  const topup = r.type === 'topup';
  return {
    id: `u_${r.seq}`,
    at: iso(r.at),
    type: r.type,
    credits: toCredits(r.amount_micro),
    held: topup ? null : toCredits(r.held_micro!),
    charged: topup ? null : toCredits(r.amount_micro),
    released: topup ? null : toCredits(subMicro(r.held_micro!, r.amount_micro)),
    balanceAfter: toCredits(r.balance_after),
    keyId: topup ? null : r.key_id,
    ref: r.ref,
    what: r.what,
    reason: r.type === 'refund' ? r.reason : null,
  };
}
