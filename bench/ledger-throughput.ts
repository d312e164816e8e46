// Child process of the ledger benchmark: one throughput measurement in a fresh process (no heap
// left over from other configurations), printed as one JSON line.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { FileLedger } from '../ledger/file-ledger.ts';

const [concurrencyArg, groupCommitArg, secondsArg] = process.argv.slice(2);
const concurrency = Number(concurrencyArg);
const seconds = Number(secondsArg);
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-ledger-'));
const l = await FileLedger.open({ dir, groupCommit: groupCommitArg === 'group', checkpointEvery: 0 });
try {
  const acc = (await l.createAccount('bench')).id;
  await l.topup(acc, 1_000_000_000_000);
  let pairs = 0;
  const deadline = performance.now() + seconds * 1000;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async (_, w) => {
      for (let i = 0; performance.now() < deadline; i++) {
        const h = await l.hold({ account: acc, amountMicro: 1_000_000, ref: `w${w}-${i}`, what: 'search' });
        if (!h.ok) throw new Error('bench account ran dry');
        await l.settle(h.hold.id, 400_000);
        pairs++;
      }
    }),
  );
  process.stdout.write(JSON.stringify({ pairsPerSec: pairs / ((performance.now() - t0) / 1000) }) + '\n');
} finally {
  await l.close({ checkpoint: false });
  fs.rmSync(dir, { recursive: true, force: true });
}
