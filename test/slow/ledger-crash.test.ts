// SIGKILL of a real process under concurrent ledger load, at several depths into the run:
// nothing acknowledged is lost, no hold stays open, balances equal the replayed log.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { crashTrial } from '../../ledger/verify/crash-trial.ts';

for (const [killAfterAcks, concurrency] of [
  [1, 1],
  [40, 4],
  [300, 32],
  [1500, 64],
  [4000, 256],
] as const) {
  test(`kill -9 after ${killAfterAcks} acknowledged operations at concurrency ${concurrency}`, async () => {
    const r = await crashTrial({ killAfterAcks, concurrency });
    assert.ok(r.acked >= killAfterAcks);
    assert.equal(r.details, []);
    assert.is(r.lost, 0);
    assert.is(r.openHoldsAfter, 0);
    assert.not.ok(r.balanceMismatch);
  });
}

test.run();
