// The ledger's boundary assertions (ledger/boundary.ts): a hold amount that is not an integer in
// [0, MAX_MICRO], a hold on an account id that is not text, text fields that are not text and a settlement that is not an integer stop where they
// enter, as AssertionFailed, and nothing is written: the balance, the open holds and the log after a
// reopen are as they were.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { AssertionFailed } from '../../core/infra/assert.ts';
import { assertHoldInput, assertResolution } from '../../ledger/boundary.ts';
import { FileLedgerStore } from '../../ledger/file-ledger-store.ts';
import { asMicro, toMicro } from '../../ledger/money.ts';
import { rejects } from '../helpers/assert.ts';
import { cleanupTmp, tmpDir } from '../helpers/tmp.ts';

test.after(cleanupTmp);

const throwsAssertion = (f: () => void, what: RegExp) =>
  assert.throws(f, (err: Error) => err instanceof AssertionFailed && what.test(err.message));

test('the checks themselves: an account id as text, an integer amount, text fields, an integer charge', () => {
  const ok = { account: 'acc_AAAAAAAAAAAAAAAA', amountMicro: toMicro('0.5'), ref: 'req_1', what: 'search' };
  assertHoldInput(ok);
  throwsAssertion(() => assertHoldInput({ ...ok, account: 7 as unknown as string }), /not an account id/);
  throwsAssertion(() => assertHoldInput({ ...ok, amountMicro: asMicro(-1) }), /not an integer of micro-credits/);
  throwsAssertion(() => assertHoldInput({ ...ok, amountMicro: asMicro(1.5) }), /not an integer of micro-credits/);
  throwsAssertion(() => assertHoldInput({ ...ok, ref: 7 as unknown as string }), /ref and what are text/);
  throwsAssertion(() => assertResolution('hld_x', asMicro(0.5), null), /not an integer/);
  throwsAssertion(() => assertResolution('hld_x', null, {} as unknown as string), /reason is text/);
});

test('the file ledger refuses them before writing: balance, holds and the reopened log unchanged', async () => {
  const dir = tmpDir('ledger-boundary-');
  const l = await FileLedgerStore.open({ dir, checkpointEvery: 0 });
  const acc = await l.createAccount('boundary');
  await l.topup(acc.id, toMicro('2'));
  await rejects(() => l.hold({ account: acc.id, amountMicro: toMicro('1'), ref: 'r', what: 5 as unknown as string }), /text/);
  const h = await l.hold({ account: acc.id, amountMicro: toMicro('1'), ref: 'r', what: 'w' });
  assert.ok(h.ok);
  await rejects(() => l.release(h.hold.id, 42 as unknown as string), /reason is text/);
  const before = await l.balance(acc.id);
  assert.equal([before.balanceMicro, before.heldMicro], [toMicro('2'), toMicro('1')], 'only the good hold is held');
  await l.close();
  const again = await FileLedgerStore.open({ dir, checkpointEvery: 0 });
  const after = await again.balance(acc.id);
  assert.is(after.balanceMicro, toMicro('2'), 'the reopened ledger holds the same balance (its open hold released at recovery)');
  await again.close();
});

test.run();
