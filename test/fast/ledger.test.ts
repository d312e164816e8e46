// The file ledger on real files: what only it has (the semantics both backends share are in
// ledger-conformance.test.ts): restart, checkpoints, rotation, torn tails, corruption, the lock,
// secrets kept off disk, idempotency records across restarts and their TTL.
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { FileLedgerStore } from '../../ledger/file-ledger-store.ts';
import { asMicro, toCredits, toMicro } from '../../ledger/money.ts';
import { LedgerCorruption } from '../../ledger/log/record-log.ts';
import { LedgerState } from '../../ledger/log/state.ts';
import { rejects } from '../helpers/assert.ts';
import { cleanupTmp, tmpDir } from '../helpers/tmp.ts';

test.after.each(cleanupTmp);

const C = (credits: number | string) => toMicro(credits);

async function fresh(opts: Partial<Parameters<typeof FileLedgerStore.open>[0]> = {}) {
  const dir = tmpDir('ledger-');
  const l = await FileLedgerStore.open({ dir, ...opts });
  const acc = await l.createAccount('acme');
  return { dir, l, acc };
}

function logFiles(dir: string): string[] {
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
  assert.is(toCredits(asMicro(400_000)), 0.4);
  assert.is(String(toCredits(asMicro(3 * 10_000))), '0.03');
  assert.throws(() => toMicro('0.0000001'), /at most 6 decimals/);
  assert.throws(() => toMicro('1e3'), /at most 6 decimals/);
});

test('keys: the secret never reaches the files; revocation survives a restart', async () => {
  const { dir, l, acc } = await fresh();
  const { key, secret } = await l.createKey(acc.id, 'ci');
  assert.is((await l.keyBySecret(secret))!.id, key.id);
  assert.is(await l.keyBySecret(secret + 'x'), null);
  await l.revokeKey(key.id);
  assert.ok((await l.keyBySecret(secret))!.revokedAt);
  await l.close();
  const onDisk = logFiles(dir)
    .map((f) => fs.readFileSync(f, 'latin1'))
    .join('');
  assert.not.ok(onDisk.includes(secret), 'the secret never reaches disk');
  const again = await FileLedgerStore.open({ dir });
  assert.ok((await again.keyBySecret(secret))!.revokedAt, 'revocation survives a restart');
  await again.close();
});

test('restart: the same state from a checkpoint, from a full replay, across rotated log files', async () => {
  const { dir, l, acc } = await fresh({ fileBytes: 4096, checkpointEvery: 50 });
  await l.topup(acc.id, C(100));
  for (let i = 0; i < 120; i++) {
    const h = await l.hold({ account: acc.id, amountMicro: C('0.5'), ref: `r${i}`, what: 'x' });
    if (i % 3) await l.settle(h.ok ? h.hold.id : '', C('0.25'));
  }
  const before = (await l.getAccount(acc.id))!;
  const seq = l.lastSeq;
  await l.close({ checkpoint: false });
  assert.ok(logFiles(dir).length > 3, 'log files rotated');

  const a = await FileLedgerStore.open({ dir });
  assert.ok(a.recovery.fromCheckpoint);
  assert.ok(a.recovery.replayed < seq);
  assert.is(a.recovery.releasedHolds, 40, 'holds left open are refunded at recovery');
  const afterA = (await a.getAccount(acc.id))!;
  assert.equal([afterA.balanceMicro, afterA.heldMicro], [before.balanceMicro, 0]);
  await a.close({ checkpoint: false });

  fs.rmSync(path.join(dir, 'checkpoint.json'));
  const b = await FileLedgerStore.open({ dir });
  assert.not.ok(b.recovery.fromCheckpoint);
  assert.equal(
    [(await b.getAccount(acc.id))!.balanceMicro, (await b.getAccount(acc.id))!.heldMicro, b.recovery.releasedHolds],
    [before.balanceMicro, 0, 0],
  );
  assert.is((await b.usage(acc.id, { limit: 500 })).entries.length, 1 + 120);
  await b.close();
});

test('a torn tail is cut and reported; everything acknowledged before it survives', async () => {
  const { dir, l, acc } = await fresh();
  await l.topup(acc.id, C(3));
  await l.close({ checkpoint: false });
  const seg = logFiles(dir).at(-1)!;
  const good = fs.statSync(seg).size;
  // Half a frame: a header announcing 200 bytes and only some of them.
  const torn = Buffer.alloc(60, 7);
  torn.writeUInt32LE(200, 0);
  fs.appendFileSync(seg, torn);
  const r = await FileLedgerStore.open({ dir });
  assert.equal(r.recovery.tornTail && { offset: r.recovery.tornTail.offset, bytesCut: r.recovery.tornTail.bytesCut }, {
    offset: good,
    bytesCut: 60,
  });
  assert.is(fs.statSync(seg).size, good);
  assert.is((await r.balance(acc.id)).balanceMicro, C(3));
  await r.close();
});

test('a corrupted record in the middle stops the open, naming the file and offset', async () => {
  const { dir, l, acc } = await fresh();
  for (let i = 0; i < 5; i++) await l.topup(acc.id, C(1));
  await l.close({ checkpoint: false });
  const seg = logFiles(dir).at(-1)!;
  const buf = fs.readFileSync(seg);
  const second = 8 + (buf.readUInt32LE(0) % 2 ** 31); // start of record 2
  buf[second + 20] = buf[second + 20]! ^ 0xff;
  fs.writeFileSync(seg, buf);
  try {
    await FileLedgerStore.open({ dir });
    assert.unreachable('open must refuse a corrupted ledger');
  } catch (err) {
    assert.instance(err, LedgerCorruption);
    assert.match((err as Error).message, new RegExp(`${path.basename(seg)} at byte ${second}: checksum mismatch`));
  }
  assert.not.ok(fs.existsSync(path.join(dir, 'LOCK')), 'a refused open leaves no lock behind');
});

test('idempotency: stored responses kept across restarts, forgotten after the TTL', async () => {
  let now = new Date('2026-11-20T00:00:00Z');
  const { dir, l, acc } = await fresh({ now: () => now });
  await l.topup(acc.id, C(1));
  assert.equal(await l.idempotencyBegin(acc.id, 'idem-1', 'hashA'), { kind: 'new' });
  assert.equal(await l.idempotencyBegin(acc.id, 'idem-1', 'hashA'), { kind: 'in_flight' });
  const h = await l.hold({ account: acc.id, amountMicro: C('0.5'), ref: 'req', what: 'search' });
  await l.settle(h.ok ? h.hold.id : '', C('0.2'), { key: 'idem-1', bodyHash: 'hashA', response: { status: 200, body: { rows: 20 } } });
  assert.equal(await l.idempotencyBegin(acc.id, 'idem-1', 'hashA'), { kind: 'replay', response: { status: 200, body: { rows: 20 } } });
  assert.equal(await l.idempotencyBegin(acc.id, 'idem-1', 'hashB'), { kind: 'conflict' });
  // Another account may use the same key freely.
  const other = await l.createAccount('other');
  assert.equal(await l.idempotencyBegin(other.id, 'idem-1', 'hashB'), { kind: 'new' });
  await l.idempotencyAbort(other.id, 'idem-1');
  await l.close();

  now = new Date('2026-11-20T23:00:00Z');
  const r = await FileLedgerStore.open({ dir, now: () => now });
  assert.equal(
    await r.idempotencyBegin(acc.id, 'idem-1', 'hashA'),
    { kind: 'replay', response: { status: 200, body: { rows: 20 } } },
    'kept across restarts',
  );
  await r.close();
  now = new Date('2026-11-22T01:00:00Z');
  const later = await FileLedgerStore.open({ dir, now: () => now });
  assert.equal(await later.idempotencyBegin(acc.id, 'idem-1', 'hashA'), { kind: 'new' }, 'forgotten after the TTL (48 h by default)');
  await later.close();
});

test('a record the state refuses leaves no trace: no sequence gap, no balance change', () => {
  const st = new LedgerState();
  st.apply({ t: 'account', seq: 1, at: 't', id: 'a', name: 'a' }, 0);
  st.apply({ t: 'topup', seq: 2, at: 't', id: 't1', account: 'a', amountMicro: asMicro(5), note: null, balanceAfterMicro: asMicro(5) }, 1);
  assert.throws(
    () =>
      st.apply(
        { t: 'topup', seq: 3, at: 't', id: 't2', account: 'a', amountMicro: asMicro(5), note: null, balanceAfterMicro: asMicro(99) },
        2,
      ),
    /balance 10 but the record says 99/,
  );
  assert.throws(
    () => st.apply({ t: 'hold', seq: 3, at: 't', id: 'h', account: 'a', key: null, amountMicro: asMicro(6), ref: 'r', what: 'w' }, 2),
    /exceeds available/,
  );
  assert.equal([st.lastSeq, st.accounts.get('a')!.balanceMicro, st.accounts.get('a')!.heldMicro], [2, 5, 0]);
  st.apply({ t: 'hold', seq: 3, at: 't', id: 'h', account: 'a', key: null, amountMicro: asMicro(5), ref: 'r', what: 'w' }, 2);
  assert.is(st.lastSeq, 3);
});

test('one writer per ledger directory', async () => {
  const { dir, l } = await fresh();
  await rejects(() => FileLedgerStore.open({ dir }), /holds the lock/);
  await l.close();
  const again = await FileLedgerStore.open({ dir });
  await again.close();
});

test.run();
