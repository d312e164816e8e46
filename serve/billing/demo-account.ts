// The demo account (docs/api.md, "Conventions"): created on the first start with DEMO_CREDITS credits and one
// key, whose secret is printed once and saved (mode 0600) in DATA_DIR/demo-key.json so a local
// user can try the API at once. The ledger itself stores only the key's hash. One file per ledger
// (demo-key.json for the file ledger, demo-key.postgres.json for PostgreSQL), so one ledger's demo
// key never overwrites another's; a ledger moved by `ledger import` keeps using the key it brought.
import fs from 'node:fs/promises';
import path from 'node:path';
import { writeFileAtomic } from '../../core/infra/durable-fs.ts';
import { acquireLock, LockHeld, type Lock } from '../../core/infra/lock.ts';
import type { LedgerStore } from '../../ledger/ledger-store.ts';
import { toMicro } from '../../ledger/money.ts';

const DEMO_KEY_FILE = 'demo-key.json';
const DEMO_LOCK_FILE = 'demo-key.lock';
const LOCK_WAIT_MS = 30_000;
export const DEMO_KEY_FILES = { file: DEMO_KEY_FILE, postgres: 'demo-key.postgres.json' } as const;

async function readDemoKey(file: string): Promise<DemoKey | null> {
  try {
    return JSON.parse(await fs.readFile(file, 'utf8')) as DemoKey;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw new Error(`${file}: ${(err as Error).message}`);
    return null;
  }
}

export interface DemoKey {
  account: string;
  keyId: string;
  secret: string;
  createdAt: string;
}

/** The demo key, created if this data directory has none yet; `created` tells whether it is new. */
export async function ensureDemoAccount(
  ledger: LedgerStore,
  dataDir: string,
  credits: number,
): Promise<{ demo: DemoKey; created: boolean; file: string }> {
  const backend = (await ledger.status()).backend;
  const file = path.join(dataDir, DEMO_KEY_FILES[backend]);
  // Replicas started together over one data directory make one demo account, not one each.
  const lock = await lockWhenFree(path.join(dataDir, DEMO_LOCK_FILE));
  try {
    return await findOrCreate(ledger, dataDir, file, credits);
  } finally {
    await lock.release();
  }
}

/** The lock, waited for (polled) while another starting process holds it, at most LOCK_WAIT_MS. */
async function lockWhenFree(file: string): Promise<Lock> {
  const end = Date.now() + LOCK_WAIT_MS;
  for (;;) {
    try {
      return await acquireLock(file);
    } catch (err) {
      if (!(err instanceof LockHeld) || Date.now() > end) throw err;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
}

async function findOrCreate(
  ledger: LedgerStore,
  dataDir: string,
  file: string,
  credits: number,
): Promise<{ demo: DemoKey; created: boolean; file: string }> {
  // This ledger's own file first, then the other's (its account is here after an import).
  for (const f of [file, ...Object.values(DEMO_KEY_FILES).map((n) => path.join(dataDir, n))]) {
    const demo = await readDemoKey(f);
    if (demo && (await ledger.getAccount(demo.account))) return { demo, created: false, file: f };
  }
  const account = await ledger.createAccount('demo');
  if (credits > 0) await ledger.topup(account.id, toMicro(credits), 'demo credits');
  const { key, secret } = await ledger.createKey(account.id, 'demo');
  const demo: DemoKey = { account: account.id, keyId: key.id, secret, createdAt: key.createdAt };
  await writeFileAtomic(file, JSON.stringify(demo, null, 2) + '\n', 0o600);
  return { demo, created: true, file };
}
