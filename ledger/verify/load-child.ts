// Load generator for ledger crash tests and the crash soak: opens the ledger in DIR and runs
// CONCURRENCY workers doing hold -> settle (or release) on ACCOUNT, plus occasional top-ups,
// printing one line per operation *after* it is durable:
//   ACK topup <note> <amount> | ACK hold <holdId> <amount> | ACK settle <holdId> <amount> | ACK release <holdId>
// The parent kills it with SIGKILL at a moment of its choosing and checks every ACK survived.
// With DATABASE_URL set it is one PostgreSQL replica among others (DIR unused; LEDGER_LEASE_MS
// its lease); with IDEM_KEY it first claims that Idempotency-Key and holds credit for the request
// running under it, never settled, then prints `BEGUN`, so the parent can see a key and a hold
// left running by a replica that died (the load's own holds may all be resolved at the kill).
import type { LedgerStore } from '../ledger-store.ts';
import { FileLedgerStore } from '../file-ledger-store.ts';
import { PgLedgerStore } from '../postgres/pg-ledger-store.ts';
import { asMicro, timesMicro, toMicro } from '../money.ts';

const CENT = toMicro('0.01');

const [dir, account, concurrencyArg = '16'] = process.argv.slice(2);
if (!dir || !account) throw new Error('usage: load-child.ts DIR ACCOUNT [CONCURRENCY]');
const { DATABASE_URL, LEDGER_LEASE_MS, IDEM_KEY } = process.env;
const ledger: LedgerStore = DATABASE_URL
  ? await PgLedgerStore.open({ databaseUrl: DATABASE_URL, leaseMs: Number(LEDGER_LEASE_MS ?? 30_000) })
  : await FileLedgerStore.open({ dir, checkpointEvery: 500 });
if (IDEM_KEY) {
  await ledger.idempotencyBegin(account, IDEM_KEY, 'load-child');
  const running = await ledger.hold({ account, amountMicro: CENT, ref: `idem_${IDEM_KEY}`, what: 'load' });
  if (!running.ok) throw new Error('load-child: no credit for the request under IDEM_KEY');
  process.stdout.write('BEGUN\n');
}
const out: string[] = [];
const flushOut = () => {
  if (out.length) process.stdout.write(out.splice(0).join(''));
};
setInterval(flushOut, 5).unref();
process.stdout.write(`READY ${ledger instanceof FileLedgerStore ? ledger.recovery.releasedHolds : 0}\n`);

let n = 0;
async function worker(w: number): Promise<never> {
  for (;;) {
    const i = n++;
    if (i % 50 === 0) {
      const amount = asMicro(1_000_000 + (i % 7));
      await ledger.topup(account!, amount, `load-${i}`);
      out.push(`ACK topup load-${i} ${amount}\n`);
    }
    const amount = timesMicro(CENT, 1 + ((i * 7919 + w) % 100));
    const r = await ledger.hold({ account: account!, amountMicro: amount, ref: `req_${i}`, what: 'load' });
    if (!r.ok) continue;
    out.push(`ACK hold ${r.hold.id} ${amount}\n`);
    if (i % 5 === 0) {
      await ledger.release(r.hold.id, 'failed');
      out.push(`ACK release ${r.hold.id}\n`);
    } else {
      const charge = asMicro(Math.floor(amount / (1 + (i % 3))));
      await ledger.settle(r.hold.id, charge);
      out.push(`ACK settle ${r.hold.id} ${charge}\n`);
    }
    // Print acknowledgements promptly: a crash must not be able to hide an ACK we never printed.
    flushOut();
  }
}
await Promise.all(Array.from({ length: Number(concurrencyArg) }, (_, w) => worker(w)));
