// Which ledger a process opens: PostgreSQL when DATABASE_URL is set (several replicas, one
// money), else the append-only file ledger in DATA_DIR/ledger (one process, the default). The
// data directory records the one it uses at first use and refuses the other afterwards
// (backend-record.ts); `ledger import` is how a data directory moves from one to the other.
import path from 'node:path';
import { redactUrl } from '../core/infra/postgres/pool.ts';
import { checkKind, LedgerChoiceError, mismatchMessage, writeBackend, type Asked, type BackendRecord } from './backend-record.ts';
import type { LedgerStore } from './ledger-store.ts';
import { FileLedgerStore } from './file-ledger-store.ts';
import type { LedgerDump } from './admin/dump-format.ts';
import { importLedger } from './admin/ledger-dump.ts';
import { PgLedgerStore } from './postgres/pg-ledger-store.ts';

export interface LedgerChoice {
  /** DATA_DIR/ledger: the file ledger's folder, the backend record's, and where the admin endpoint is announced. */
  dir: string;
  databaseUrl?: string | undefined;
  leaseMs?: number;
  /** DATABASE_URL is `npm run cluster`'s own local server: recorded whole, so the admin CLI finds it. */
  local?: boolean;
}

const asked = (c: LedgerChoice): Asked => ({ kind: c.databaseUrl ? 'postgres' : 'file', databaseUrl: c.databaseUrl });

/** Open the ledger `c` names, with what the data directory would record of it. */
async function openNamed(c: LedgerChoice): Promise<{ ledger: LedgerStore; record: Omit<BackendRecord, 'recordedAt'> }> {
  if (!c.databaseUrl) return { ledger: await FileLedgerStore.open({ dir: c.dir }), record: { kind: 'file' } };
  const ledger = await PgLedgerStore.open({ databaseUrl: c.databaseUrl, leaseMs: c.leaseMs });
  try {
    const ledgerId = await ledger.ledgerId();
    return {
      ledger,
      record: { kind: 'postgres', ledgerId, database: redactUrl(c.databaseUrl), ...(c.local ? { localUrl: c.databaseUrl } : {}) },
    };
  } catch (err) {
    await ledger.close();
    throw err;
  }
}

/** The data directory's ledger: refused (LedgerChoiceError) when it records another one; recorded at first use. */
export async function openLedgerStore(c: LedgerChoice): Promise<LedgerStore> {
  const dataDir = path.dirname(c.dir);
  const recorded = await checkKind(dataDir, c.dir, asked(c));
  const { ledger, record } = await openNamed(c);
  try {
    if (recorded?.kind === 'postgres' && recorded.ledgerId !== record.ledgerId)
      throw new LedgerChoiceError(mismatchMessage(dataDir, recorded, { ...asked(c), ledgerId: record.ledgerId! }));
    // Written when new (or only inferred), and when the cluster's local server moved to another port.
    if (!recorded || recorded.inferred || (c.local && recorded.localUrl !== c.databaseUrl)) await writeBackend(c.dir, record);
  } catch (err) {
    await ledger.close();
    throw err;
  }
  return ledger;
}

/**
 * `ledger import`: a checked export into the ledger `c` names (empty, unless `merge`), which then
 * becomes the data directory's ledger whatever it recorded before (only once the import is in).
 */
export async function importInto(
  c: LedgerChoice,
  dump: LedgerDump,
  merge = false,
): Promise<{ accounts: number; keys: number; entries: number }> {
  const { ledger, record } = await openNamed(c);
  try {
    const counts = await importLedger(ledger, dump, merge);
    await writeBackend(c.dir, record);
    return counts;
  } finally {
    await ledger.close();
  }
}
