// Model-based property test: random sequences of top-ups, holds, settlements, releases and
// restarts run against the real ledger and a ten-line reference model; after every step the
// balances, holds and refusals must agree, and the invariants must hold.
import fc from 'fast-check';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { FileLedgerStore } from '../../ledger/file-ledger-store.ts';
import { asMicro } from '../../ledger/money.ts';
import { cleanupTmp, tmpDir } from '../helpers/tmp.ts';

type Cmd =
  | { op: 'topup'; acc: number; amount: number }
  | { op: 'hold'; acc: number; amount: number }
  | { op: 'settle'; hold: number; part: number }
  | { op: 'release'; hold: number }
  | { op: 'restart'; dropCheckpoint: boolean };

const cmd: fc.Arbitrary<Cmd> = fc.oneof(
  fc.record({ op: fc.constant('topup' as const), acc: fc.nat(1), amount: fc.integer({ min: 1, max: 3_000_000 }) }),
  fc.record({ op: fc.constant('hold' as const), acc: fc.nat(1), amount: fc.integer({ min: 0, max: 2_000_000 }) }),
  fc.record({ op: fc.constant('settle' as const), hold: fc.nat(20), part: fc.double({ min: 0, max: 1, noNaN: true }) }),
  fc.record({ op: fc.constant('release' as const), hold: fc.nat(20) }),
  fc.record({ op: fc.constant('restart' as const), dropCheckpoint: fc.boolean() }),
);

interface Model {
  balance: number[];
  held: number[];
  holds: Map<string, { acc: number; amount: number }>;
}

test.after.each(cleanupTmp);

test('random operation sequences agree with a reference model, across restarts', async () => {
  await fc.assert(
    fc.asyncProperty(fc.array(cmd, { minLength: 5, maxLength: 60 }), async (cmds) => {
      const dir = tmpDir('ledger-model-');
      let l = await FileLedgerStore.open({ dir, checkpointEvery: 7, fileBytes: 2048 });
      const accs = [(await l.createAccount('a')).id, (await l.createAccount('b')).id];
      const m: Model = { balance: [0, 0], held: [0, 0], holds: new Map() };
      const holdIds: string[] = [];
      try {
        for (const c of cmds) {
          if (c.op === 'topup') {
            await l.topup(accs[c.acc]!, asMicro(c.amount));
            m.balance[c.acc]! += c.amount;
          } else if (c.op === 'hold') {
            const r = await l.hold({ account: accs[c.acc]!, amountMicro: asMicro(c.amount), ref: 'r', what: 'w' });
            const available = m.balance[c.acc]! - m.held[c.acc]!;
            assert.is(r.ok, c.amount <= available, 'hold granted exactly when available covers it');
            if (r.ok) {
              m.held[c.acc]! += c.amount;
              m.holds.set(r.hold.id, { acc: c.acc, amount: c.amount });
              holdIds.push(r.hold.id);
            } else {
              assert.equal([r.requiredMicro, r.availableMicro], [c.amount, available]);
            }
          } else if (c.op === 'settle' || c.op === 'release') {
            const id = holdIds[c.hold % Math.max(holdIds.length, 1)];
            const h = id ? m.holds.get(id) : undefined;
            if (!id || !h) {
              if (id) {
                const again = c.op === 'settle' ? l.settle(id, asMicro(0)) : l.release(id, 'x');
                await again.then(
                  () => assert.unreachable('a resolved hold resolves again'),
                  () => {},
                );
              }
              continue;
            }
            const amount = c.op === 'settle' ? Math.floor(h.amount * c.part) : 0;
            if (c.op === 'settle') await l.settle(id, asMicro(amount));
            else await l.release(id, 'failed');
            m.held[h.acc]! -= h.amount;
            m.balance[h.acc]! -= amount;
            m.holds.delete(id);
          } else {
            await l.close({ checkpoint: !c.dropCheckpoint });
            l = await FileLedgerStore.open({ dir, checkpointEvery: 7, fileBytes: 2048 });
            // Open holds died with the "process": recovery refunds every one of them.
            assert.is(l.recovery.releasedHolds, m.holds.size);
            for (const h of m.holds.values()) m.held[h.acc]! -= h.amount;
            m.holds.clear();
          }
          for (const [i, acc] of accs.entries()) {
            const b = await l.balance(acc);
            assert.equal([b.balanceMicro, b.heldMicro], [m.balance[i], m.held[i]]);
            assert.ok(b.availableMicro >= 0, 'available never negative');
          }
          assert.is((await l.openHolds()).length, m.holds.size);
        }
      } finally {
        await l.close();
      }
    }),
    { numRuns: 150 },
  );
});

test.run();
