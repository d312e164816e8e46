// The ledger's record codec (ledger/log/records.ts): in memory the amounts carry their unit
// (amountMicro, heldMicro, balanceAfterMicro), on disk they keep the log's names (amount, held,
// balanceAfter), so a log written before the rename reads the same and a record is written byte for
// byte as it always was.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { asMicro } from '../../ledger/money.ts';
import { decodeRecord, encodeRecord, type LedgerRecord } from '../../ledger/log/records.ts';

// Records as the log has always held them, one of each kind that carries money.
const STORED = [
  '{"t":"topup","id":"top_1","account":"acc_1","amount":5000000,"note":null,"balanceAfter":5000000,"seq":2,"at":"2026-11-20T00:00:00.000Z"}',
  '{"t":"hold","id":"hld_1","account":"acc_1","key":"key_1","amount":1000000,"ref":"req_1","what":"search","seq":3,"at":"2026-11-20T00:00:01.000Z"}',
  '{"t":"settle","hold":"hld_1","amount":400000,"idem":{"key":"k","bodyHash":"h","response":{"held":1,"amount":2}},' +
    '"account":"acc_1","key":"key_1","held":1000000,"ref":"req_1","what":"search","balanceAfter":4600000,"seq":4,' +
    '"at":"2026-11-20T00:00:02.000Z"}',
  '{"t":"release","hold":"hld_2","reason":"failed","account":"acc_1","key":null,"held":200000,"ref":"req_2","what":"job",' +
    '"balanceAfter":4600000,"seq":6,"at":"2026-11-20T00:00:03.000Z"}',
];

test('a stored record reads with the unit names and is written back byte for byte', () => {
  for (const line of STORED) {
    const r = decodeRecord(Buffer.from(line, 'utf8'));
    assert.is(encodeRecord(r).toString('utf8'), line);
    const names = Object.keys(r);
    assert.not.ok(names.includes('amount') || names.includes('held') || names.includes('balanceAfter'), names.join());
  }
  const settle = decodeRecord(Buffer.from(STORED[2]!, 'utf8')) as Extract<LedgerRecord, { t: 'settle' }>;
  assert.equal([settle.amountMicro, settle.heldMicro, settle.balanceAfterMicro], [400_000, 1_000_000, 4_600_000]);
  // A stored response is the client's, verbatim: its own fields are never renamed.
  assert.equal(settle.idem!.response, { held: 1, amount: 2 });
});

test('a record made in memory is written with the log’s names', () => {
  const r: LedgerRecord = {
    t: 'topup',
    id: 'top_1',
    account: 'acc_1',
    amountMicro: asMicro(5_000_000),
    note: null,
    balanceAfterMicro: asMicro(5_000_000),
    seq: 2,
    at: '2026-11-20T00:00:00.000Z',
  };
  assert.is(encodeRecord(r).toString('utf8'), STORED[0]);
});

test.run();
