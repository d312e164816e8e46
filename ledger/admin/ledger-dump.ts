// `npm run admin -- ledger export | import` (docs/ledger.md, "Moving a ledger"): a ledger as JSON
// lines, the same from either backend and into either. Accounts with their balance, keys (hashes
// only: no secret exists to export), and every usage entry (top-ups, settlements, refunds) so a
// key's /usage history survives the move. Open holds are not exported: their work has not been
// charged, so the exported balance is the settled one and nothing is held after the import. A
// file is checked whole before anything is written: every entry's balance follows from the one
// before, each account ends on its exported balance, and the last line counts what precedes it
// (a cut file is refused).
import fs from 'node:fs/promises';
import { LedgerError, type LedgerStore, type UsageEntry } from '../ledger-store.ts';
import { addMicro, subMicro, toMicro, ZERO_MICRO, type Micro } from '../money.ts';
import type { DumpAccount, DumpEntry, DumpKey, LedgerDump } from './dump-format.ts';

const DUMP_VERSION = 1;

interface Header {
  t: 'ledger-export';
  version: number;
  backend: 'file' | 'postgres';
  exportedAt: string;
}
interface End {
  t: 'end';
  accounts: number;
  keys: number;
  entries: number;
}

export class DumpError extends Error {}

/** Write the ledger to `file` (mode 0600), account by account; returns what it wrote. */
export async function exportLedger(ledger: LedgerStore, file: string): Promise<End> {
  const out = await fs.open(file, 'w', 0o600);
  const end: End = { t: 'end', accounts: 0, keys: 0, entries: 0 };
  try {
    const line = (v: unknown) => out.write(JSON.stringify(v) + '\n');
    const header: Header = {
      t: 'ledger-export',
      version: DUMP_VERSION,
      backend: (await ledger.status()).backend,
      exportedAt: new Date().toISOString(),
    };
    await line(header);
    for (const id of await ledger.accountIds()) {
      const a = (await ledger.getAccount(id))!;
      // Newest first, page by page; entries are append-only, so the pages stay right while others are written.
      const entries: UsageEntry[] = [];
      let cursor: string | null = null;
      do {
        const page = await ledger.usage(id, { cursor, limit: 500 });
        entries.push(...page.entries);
        cursor = page.nextCursor;
      } while (cursor);
      entries.reverse();
      const balanceMicro = entries.length ? toMicro(entries.at(-1)!.balanceAfter) : ZERO_MICRO;
      await line({ t: 'account', id, name: a.name, createdAt: a.createdAt, balanceMicro } satisfies DumpAccount);
      for (const k of a.keys) await line({ t: 'key', ...k } satisfies DumpKey);
      for (const e of entries) await line(dumpEntry(id, e));
      end.accounts++;
      end.keys += a.keys.length;
      end.entries += entries.length;
    }
    await line(end);
    await out.sync();
  } finally {
    await out.close();
  }
  return end;
}

function dumpEntry(account: string, e: UsageEntry): DumpEntry {
  return {
    t: 'entry',
    account,
    type: e.type,
    keyId: e.keyId,
    amountMicro: toMicro(e.credits),
    heldMicro: e.held === null ? null : toMicro(e.held),
    balanceAfterMicro: toMicro(e.balanceAfter),
    ref: e.ref,
    what: e.what,
    reason: e.reason,
    at: e.at,
  };
}

/** Read and check an export whole; throws DumpError saying the first thing wrong (and its line). */
export async function readDump(file: string): Promise<LedgerDump> {
  let text: string;
  try {
    text = await fs.readFile(file, 'utf8');
  } catch (err) {
    throw new DumpError(`${file}: ${(err as Error).message}`);
  }
  const dump: LedgerDump = { accounts: [], keys: [], entries: [] };
  let end: End | null = null;
  const lines = text.split('\n').filter((l) => l.trim());
  lines.forEach((l, i) => {
    const at = `${file}:${i + 1}`;
    let v: { t?: unknown };
    try {
      v = JSON.parse(l) as { t?: unknown };
    } catch {
      throw new DumpError(`${at}: not JSON`);
    }
    if (i === 0) {
      const h = v as Header;
      if (h.t !== 'ledger-export' || h.version !== DUMP_VERSION)
        throw new DumpError(`${at}: not a ledger export (version ${DUMP_VERSION})`);
      return;
    }
    if (end) throw new DumpError(`${at}: a line after the end line`);
    if (v.t === 'account') dump.accounts.push(v as DumpAccount);
    else if (v.t === 'key') dump.keys.push(v as DumpKey);
    else if (v.t === 'entry') dump.entries.push(v as DumpEntry);
    else if (v.t === 'end') end = v as End;
    else throw new DumpError(`${at}: unknown line type ${JSON.stringify(v.t)}`);
  });
  const e = end as End | null;
  if (!e || e.accounts !== dump.accounts.length || e.keys !== dump.keys.length || e.entries !== dump.entries.length)
    throw new DumpError(`${file}: cut short or edited (its end line does not count what it holds)`);
  checkDump(dump);
  return dump;
}

const isMicro = (n: unknown): n is Micro => Number.isSafeInteger(n) && (n as number) >= 0;

/** Every balance follows from the entries; ids unique; keys on known accounts. */
function checkDump(d: LedgerDump): void {
  const balances = new Map<string, Micro>();
  for (const a of d.accounts) {
    if (typeof a.id !== 'string' || !a.id || typeof a.name !== 'string' || !isMicro(a.balanceMicro))
      throw new DumpError(`account ${a.id}: malformed`);
    if (balances.has(a.id)) throw new DumpError(`account ${a.id} twice`);
    balances.set(a.id, ZERO_MICRO);
  }
  const keyIds = new Set<string>();
  const hashes = new Set<string>();
  for (const k of d.keys) {
    if (!balances.has(k.account)) throw new DumpError(`key ${k.id}: no account ${k.account}`);
    if (keyIds.has(k.id) || hashes.has(k.hash)) throw new DumpError(`key ${k.id} twice`);
    if (!/^[0-9a-f]{64}$/.test(k.hash)) throw new DumpError(`key ${k.id}: its hash is not a SHA-256`);
    keyIds.add(k.id);
    hashes.add(k.hash);
  }
  for (const e of d.entries) {
    const before = balances.get(e.account);
    if (before === undefined) throw new DumpError(`entry of unknown account ${e.account}`);
    if (!isMicro(e.amountMicro) || !isMicro(e.balanceAfterMicro))
      throw new DumpError(`entry of ${e.account} at ${e.at}: malformed amounts`);
    let after: Micro;
    if (e.type === 'topup') after = addMicro(before, e.amountMicro);
    else if (e.type === 'settlement' || e.type === 'refund') {
      if (!isMicro(e.heldMicro) || e.amountMicro > e.heldMicro || (e.type === 'refund' && e.amountMicro !== 0))
        throw new DumpError(`entry of ${e.account} at ${e.at}: a charge beyond its hold`);
      after = subMicro(before, e.amountMicro);
    } else throw new DumpError(`entry of ${e.account}: unknown type ${JSON.stringify(e.type)}`);
    if (after !== e.balanceAfterMicro || after < 0)
      throw new DumpError(`entry of ${e.account} at ${e.at}: balance ${e.balanceAfterMicro} does not follow (${after})`);
    balances.set(e.account, after);
  }
  for (const a of d.accounts)
    if (balances.get(a.id) !== a.balanceMicro)
      throw new DumpError(`account ${a.id}: its entries end on ${balances.get(a.id)}, not ${a.balanceMicro}`);
}

/** Import into `ledger`: refused when it holds accounts (unless `merge`, and then for any id it already has). */
export async function importLedger(
  ledger: LedgerStore,
  d: LedgerDump,
  merge = false,
): Promise<{ accounts: number; keys: number; entries: number }> {
  const existing = await ledger.accountIds();
  if (existing.length && !merge)
    throw new LedgerError(
      'invalid',
      `the ledger already holds ${existing.length} account(s): import into an empty one, or pass --merge to add these beside them`,
    );
  const have = new Set(existing);
  const clash = d.accounts.find((a) => have.has(a.id));
  if (clash) throw new LedgerError('invalid', `account ${clash.id} is already in this ledger: nothing imported`);
  for (const k of d.keys)
    if (await ledger.keyByHash(k.hash))
      throw new LedgerError('invalid', `key ${k.id} (its hash) is already in this ledger: nothing imported`);
  await ledger.importHistory(d);
  // The check the brief of a move is: every balance as it was.
  for (const a of d.accounts) {
    const b = await ledger.balance(a.id);
    if (b.balanceMicro !== a.balanceMicro || b.heldMicro !== 0)
      throw new LedgerError('invalid', `account ${a.id}: ${b.balanceMicro} after the import, ${a.balanceMicro} in the export`);
  }
  return { accounts: d.accounts.length, keys: d.keys.length, entries: d.entries.length };
}
