// Which ledger a process opens: PostgreSQL when DATABASE_URL is set (several replicas, one
// money), else the append-only file ledger in DATA_DIR/ledger (one process, the default).
import type { CreditLedger } from './credit-ledger.ts';
import { FileLedger } from './file-ledger.ts';
import { PgLedger } from './postgres/pg-ledger.ts';

export interface LedgerChoice {
  /** DATA_DIR/ledger: the file ledger's folder (and where the admin endpoint is announced). */
  dir: string;
  databaseUrl?: string | undefined;
  leaseMs?: number;
}

export function openLedger(c: LedgerChoice): Promise<CreditLedger> {
  return c.databaseUrl ? PgLedger.open({ databaseUrl: c.databaseUrl, leaseMs: c.leaseMs }) : FileLedger.open({ dir: c.dir });
}
