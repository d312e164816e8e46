// The credit ledger through its public API on real files: holds, settlement, refunds, usage,
// keys, concurrency, restart, checkpoints, rotation, torn tails, corruption, idempotency.
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Ledger, LedgerError } from '../ledger/ledger.ts';
import { toCredits, toMicro } from '../ledger/money.ts';
import { LedgerCorruption } from '../ledger/segment-log.ts';
import { LedgerState } from '../ledger/state.ts';
import { rejects } from './helpers/assert.ts';
import { cleanupTmp, tmpDir } from './helpers/tmp.ts';

test.after.each(cleanupTmp);

const C = (credits: number | string) => toMicro(credits);

async function fresh(opts: Partial<Parameters<typeof Ledger.open>[0]> = {}) {
  const dir = tmpDir('ledger-');
  const l = await Ledger.open({ dir, ...opts });
  const acc = await l.createAccount('acme');
  return { dir, l, acc };
}

function segments(dir: string): string[] {
  return fs
    .readdirSync(dir)
    .filter((f) => f.startsWith('seg-'))
    .sort()
    .map((f) => path.join(dir, f));
}

test('money: decimal strings to micro-credits exactly, and back without float noise', () => {
  assert.is(toMicro('0.1'), 100_000);
  assert.is(toMicro(0.4), 400_000);
  assert.is(toMicro('45'), 45_000_000);
  assert.is(toCredits(400_000), 0.4);
  assert.is(String(toCredits(3 * 10_000)), '0.03');
  assert.throws(() => toMicro('0.0000001'), /at most 6 decimals/);
  assert.throws(() => toMicro('1e3'), /at most 6 decimals/);
});

test('hold, partial settle, refund: balance = top-ups - settlements, available = balance - holds', async () => {
  const { l, acc } = await fresh();
  await l.topup(acc.id, C(5));
  const h1 = await l.hold({ account: acc.id, amountMicro: C(1), ref: 'req_1', what: 'search limit 100' });
  assert.ok(h1.ok);
  assert.equal(l.balance(acc.id), { balanceMicro: C(5), heldMicro: C(1), availableMicro: C(4) });
  const s = await l.settle(h1.ok ? h1.hold.id : '', C('0.4'));
  assert.equal(s, { balanceMicro: C('4.6'), heldMicro: 0, availableMicro: C('4.6'), chargedMicro: C('0.4') });
  const h2 = await l.hold({ account: acc.id, amountMicro: C(2), ref: 'req_2', what: 'insights' });
  await l.release(h2.ok ? h2.hold.id : '', 'failed');
  assert.equal(l.balance(acc.id), { balanceMicro: C('4.6'), heldMicro: 0, availableMicro: C('4.6') });
  await l.close();
});

test('a hold larger than available is refused with required and available, and nothing is written', async () => {
  const { l, acc } = await fresh();
  await l.topup(acc.id, C(1));
  await l.hold({ account: acc.id, amountMicro: C('0.7'), ref: 'a', what: 'x' });
  const seq = l.lastSeq;
  const r = await l.hold({ account: acc.id, amountMicro: C('0.5'), ref: 'b', what: 'x' });
  assert.equal(r, { ok: false, code: 'insufficient_credits', requiredMicro: C('0.5'), availableMicro: C('0.3') });
  assert.is(l.lastSeq, seq);
  await l.close();
});

test('a hold resolves exactly once', async () => {
  const { l, acc } = await fresh();
  await l.topup(acc.id, C(1));
  const h = await l.hold({ account: acc.id, amountMicro: C(1), ref: 'r', what: 'x' });
  const id = h.ok ? h.hold.id : '';
  const both = await Promise.allSettled([l.settle(id, C('0.5')), l.settle(id, C('0.5')), l.release(id, 'failed')]);
  assert.equal(
    both.map((b) => b.status),
    ['fulfilled', 'rejected', 'rejected'],
  );
  assert.instance((both[1] as PromiseRejectedResult).reason, LedgerError);
  assert.is(l.balance(acc.id).balanceMicro, C('0.5'));
  await l.close();
});

test('settle cannot exceed its hold; amounts must be integer micro-credits', async () => {
  const { l, acc } = await fresh();
  await l.topup(acc.id, C(1));
  const h = await l.hold({ account: acc.id, amountMicro: C('0.2'), ref: 'r', what: 'x' });
  await rejects(() => l.settle(h.ok ? h.hold.id : '', C('0.3')), /exceeds the hold/);
  await rejects(() => l.topup(acc.id, 1.5), /integer amount/);
  await rejects(() => l.topup('acc_nope', 1), /no account/);
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
  assert.equal(l.balance(acc.id), { balanceMicro: C('2.5'), heldMicro: C('2.5'), availableMicro: 0 });
  // Settle them all concurrently for one row each; the balance drop equals the sum of charges.
  await Promise.all(granted.map((g) => l.settle(g.ok ? g.hold.id : '', C('0.01'))));
  assert.equal(l.balance(acc.id), { balanceMicro: 0, heldMicro: 0, availableMicro: 0 });
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
  do {
    const page: ReturnType<Ledger['usage']> = l.usage(acc.id, { limit: 3, cursor });
    all.push(...page.entries.map((e) => `${e.type}:${e.ref}`));
    cursor = page.nextCursor;
  } while (cursor);
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
  const first = l.usage(acc.id, { limit: 1 }).entries[0]!;
  assert.equal(
    { credits: first.credits, held: first.held, balanceAfter: first.balanceAfter, keyId: first.keyId },
    { credits: 0.1, held: 1, balanceAfter: 9.4, keyId: k1.id },
  );
  const refund = l.usage(acc.id, { keyId: k2.id }).entries.find((e) => e.type === 'refund')!;
  // A released hold shows what was held and released, and that nothing was charged (not 1 credit paid back).
  assert.equal(
    [refund.credits, refund.held, refund.charged, refund.released, refund.reason, refund.balanceAfter],
    [0, 1, 0, 1, 'failed', 9.7],
  );
  assert.equal([first.charged, first.released], [0.1, 0.9]);
  assert.is(l.usage(acc.id, { keyId: k2.id }).entries.length, 3);
  assert.throws(() => l.usage(acc.id, { cursor: 'garbage' }), /invalid cursor/);
  await l.close();
});

test('keys: looked up by secret (stored only as SHA-256), revocation recorded', async () => {
  const { dir, l, acc } = await fresh();
  const { key, secret } = await l.createKey(acc.id, 'ci');
  assert.is(l.keyBySecret(secret)!.id, key.id);
  assert.is(l.keyBySecret(secret + 'x'), null);
  await l.revokeKey(key.id);
  assert.ok(l.keyBySecret(secret)!.revokedAt);
  await l.close();
  const onDisk = segments(dir)
    .map((f) => fs.readFileSync(f, 'latin1'))
    .join('');
  assert.not.ok(onDisk.includes(secret), 'the secret never reaches disk');
  const again = await Ledger.open({ dir });
  assert.ok(again.keyBySecret(secret)!.revokedAt, 'revocation survives a restart');
  await again.close();
});

test('restart: the same state from a checkpoint, from a full replay, across rotated segments', async () => {
  const { dir, l, acc } = await fresh({ segmentBytes: 4096, checkpointEvery: 50 });
  await l.topup(acc.id, C(100));
  for (let i = 0; i < 120; i++) {
    const h = await l.hold({ account: acc.id, amountMicro: C('0.5'), ref: `r${i}`, what: 'x' });
    if (i % 3) await l.settle(h.ok ? h.hold.id : '', C('0.25'));
  }
  const before = l.getAccount(acc.id)!;
  const seq = l.lastSeq;
  await l.close({ checkpoint: false });
  assert.ok(segments(dir).length > 3, 'segments rotated');

  const a = await Ledger.open({ dir });
  assert.ok(a.recovery.fromCheckpoint);
  assert.ok(a.recovery.replayed < seq);
  assert.is(a.recovery.releasedHolds, 40, 'holds left open are refunded at recovery');
  const afterA = a.getAccount(acc.id)!;
  assert.equal([afterA.balanceMicro, afterA.heldMicro], [before.balanceMicro, 0]);
  await a.close({ checkpoint: false });

  fs.rmSync(path.join(dir, 'checkpoint.json'));
  const b = await Ledger.open({ dir });
  assert.not.ok(b.recovery.fromCheckpoint);
  assert.equal(
    [b.getAccount(acc.id)!.balanceMicro, b.getAccount(acc.id)!.heldMicro, b.recovery.releasedHolds],
    [before.balanceMicro, 0, 0],
  );
  assert.is(b.usage(acc.id, { limit: 500 }).entries.length, 1 + 120);
  await b.close();
});

test('a torn tail is cut and reported; everything acknowledged before it survives', async () => {
  const { dir, l, acc } = await fresh();
  await l.topup(acc.id, C(3));
  await l.close({ checkpoint: false });
  const seg = segments(dir).at(-1)!;
  const good = fs.statSync(seg).size;
  // Half a frame: a header announcing 200 bytes and only some of them.
  const torn = Buffer.alloc(60, 7);
  torn.writeUInt32LE(200, 0);
  fs.appendFileSync(seg, torn);
  const r = await Ledger.open({ dir });
  assert.equal(r.recovery.tornTail && { offset: r.recovery.tornTail.offset, bytesCut: r.recovery.tornTail.bytesCut }, {
    offset: good,
    bytesCut: 60,
  });
  assert.is(fs.statSync(seg).size, good);
  assert.is(r.balance(acc.id).balanceMicro, C(3));
  await r.close();
});

test('a corrupted record in the middle stops the open, naming the file and offset', async () => {
  const { dir, l, acc } = await fresh();
  for (let i = 0; i < 5; i++) await l.topup(acc.id, C(1));
  await l.close({ checkpoint: false });
  const seg = segments(dir).at(-1)!;
  const buf = fs.readFileSync(seg);
  const second = 8 + (buf.readUInt32LE(0) % 2 ** 31); // start of record 2
  buf[second + 20] = buf[second + 20]! ^ 0xff;
  fs.writeFileSync(seg, buf);
  try {
    await Ledger.open({ dir });
    assert.unreachable('open must refuse a corrupted ledger');
  } catch (err) {
    assert.instance(err, LedgerCorruption);
    assert.match((err as Error).message, new RegExp(`${path.basename(seg)} at byte ${second}: checksum mismatch`));
  }
  assert.not.ok(fs.existsSync(path.join(dir, 'LOCK')), 'a refused open leaves no lock behind');
});

test('idempotency: replay returns the stored response, another body conflicts, a running duplicate is in flight, TTL', async () => {
  let now = new Date('2026-11-20T00:00:00Z');
  const { dir, l, acc } = await fresh({ now: () => now });
  await l.topup(acc.id, C(1));
  assert.equal(l.idempotencyBegin(acc.id, 'idem-1', 'hashA'), { kind: 'new' });
  assert.equal(l.idempotencyBegin(acc.id, 'idem-1', 'hashA'), { kind: 'in_flight' });
  const h = await l.hold({ account: acc.id, amountMicro: C('0.5'), ref: 'req', what: 'search' });
  await l.settle(h.ok ? h.hold.id : '', C('0.2'), { key: 'idem-1', bodyHash: 'hashA', response: { status: 200, body: { rows: 20 } } });
  assert.equal(l.idempotencyBegin(acc.id, 'idem-1', 'hashA'), { kind: 'replay', response: { status: 200, body: { rows: 20 } } });
  assert.equal(l.idempotencyBegin(acc.id, 'idem-1', 'hashB'), { kind: 'conflict' });
  // Another account may use the same key freely.
  const other = await l.createAccount('other');
  assert.equal(l.idempotencyBegin(other.id, 'idem-1', 'hashB'), { kind: 'new' });
  l.idempotencyAbort(other.id, 'idem-1');
  await l.close();

  now = new Date('2026-11-20T23:00:00Z');
  const r = await Ledger.open({ dir, now: () => now });
  assert.equal(
    r.idempotencyBegin(acc.id, 'idem-1', 'hashA'),
    { kind: 'replay', response: { status: 200, body: { rows: 20 } } },
    'kept across restarts',
  );
  await r.close();
  now = new Date('2026-11-22T01:00:00Z');
  const later = await Ledger.open({ dir, now: () => now });
  assert.equal(later.idempotencyBegin(acc.id, 'idem-1', 'hashA'), { kind: 'new' }, 'forgotten after the TTL (48 h by default)');
  await later.close();
});

test('a record the state refuses leaves no trace: no sequence gap, no balance change', () => {
  const st = new LedgerState();
  st.apply({ t: 'account', seq: 1, at: 't', id: 'a', name: 'a' }, 0);
  st.apply({ t: 'topup', seq: 2, at: 't', id: 't1', account: 'a', amount: 5, note: null, balanceAfter: 5 }, 1);
  assert.throws(
    () => st.apply({ t: 'topup', seq: 3, at: 't', id: 't2', account: 'a', amount: 5, note: null, balanceAfter: 99 }, 2),
    /balance 10 but the record says 99/,
  );
  assert.throws(
    () => st.apply({ t: 'hold', seq: 3, at: 't', id: 'h', account: 'a', key: null, amount: 6, ref: 'r', what: 'w' }, 2),
    /exceeds available/,
  );
  assert.equal([st.lastSeq, st.accounts.get('a')!.balanceMicro, st.accounts.get('a')!.heldMicro], [2, 5, 0]);
  st.apply({ t: 'hold', seq: 3, at: 't', id: 'h', account: 'a', key: null, amount: 5, ref: 'r', what: 'w' }, 2);
  assert.is(st.lastSeq, 3);
});

test('one writer per ledger directory', async () => {
  const { dir, l } = await fresh();
  await rejects(() => Ledger.open({ dir }), /holds the lock/);
  await l.close();
  const again = await Ledger.open({ dir });
  await again.close();
});

test.run();
