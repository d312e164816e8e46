// Child process of the ledger benchmark: one throughput measurement in a fresh process (no heap
// left over from other configurations), printed as one JSON line. Modes: `group` and `single`
// (the file ledger with group commit, or an fdatasync per operation), `postgres` (the PostgreSQL
// ledger at DATABASE_URL, a database of its own).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { LedgerStore } from '../ledger/ledger-store.ts';
import { FileLedgerStore } from '../ledger/file-ledger-store.ts';
import { PgLedgerStore } from '../ledger/postgres/pg-ledger-store.ts';
import { toMicro } from '../ledger/money.ts';

const [concurrencyArg, mode, secondsArg] = process.argv.slice(2);
const concurrency = Number(concurrencyArg);
const seconds = Number(secondsArg);
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-ledger-'));
const l: LedgerStore =
  mode === 'postgres'
    ? await PgLedgerStore.open({ databaseUrl: process.env.DATABASE_URL! })
    : await FileLedgerStore.open({ dir, groupCommit: mode === 'group', checkpointEvery: 0 });
try {
  const acc = (await l.createAccount('bench')).id;
  await l.topup(acc, toMicro(1_000_000));
  let pairs = 0;
  const deadline = performance.now() + seconds * 1000;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async (_, w) => {
      for (let i = 0; performance.now() < deadline; i++) {
        const h = await l.hold({ account: acc, amountMicro: toMicro(1), ref: `w${w}-${i}`, what: 'search' });
        if (!h.ok) throw new Error('bench account ran dry');
        await l.settle(h.hold.id, toMicro(0.4));
        pairs++;
      }
    }),
  );
  process.stdout.write(JSON.stringify({ pairsPerSec: pairs / ((performance.now() - t0) / 1000) }) + '\n');
} finally {
  await l.close({ checkpoint: false });
  fs.rmSync(dir, { recursive: true, force: true });
}
