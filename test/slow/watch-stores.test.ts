// The two watch stores (serve/alerts): the files of DATA_DIR/alerts/watches and PostgreSQL. Each
// keeps a watch as it was given, lists an account's oldest first, pauses and resumes, removes; the
// files are read back by a new process's store; on PostgreSQL the per-account bound holds when
// two stores (two replicas) create at once.
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { Watch } from '../../serve/alerts/alert-model.ts';
import type { WatchStore } from '../../serve/alerts/watch-store.ts';
import { FileWatchStore } from '../../serve/alerts/file-watch-store.ts';
import { PgWatchStore } from '../../serve/alerts/pg-watch-store.ts';
import { database, stopPostgres } from '../helpers/postgres.ts';
import { cleanupTmp, tmpDir } from '../helpers/tmp.ts';

test.after.each(cleanupTmp);
test.after(stopPostgres);

let n = 0;
function watch(account: string, over: Partial<Watch> = {}): Watch {
  n++;
  return {
    id: `alw_t${n}`,
    account,
    name: n % 2 ? `watch ${n}` : null,
    target: n % 3 ? { kind: 'query', query: 'battery recall' } : { kind: 'theme', theme_key: 'tk-abc' },
    windows: ['7d', 'all'],
    conditions: { momentum: { level: 0.5, direction: 'down' }, lifecycle: { to: ['growing'] } },
    url: 'https://93.184.215.14/hook',
    created_at: new Date(Date.UTC(2026, 10, 1, 0, 0, n)).toISOString(),
    secret_version: 1,
    paused: null,
    ...over,
  };
}

async function conformance(open: () => Promise<WatchStore>): Promise<void> {
  const s = await open();
  const a = [watch('acct_a'), watch('acct_a'), watch('acct_a')];
  const b = watch('acct_b');
  for (const w of [a[1]!, b, a[0]!, a[2]!]) assert.ok(await s.add(w, 3));
  assert.not.ok(await s.add(watch('acct_a'), 3), 'a fourth for a bound of 3');
  assert.ok(await s.add(watch('acct_b'), 3), 'the bound is per account');
  assert.equal(await s.get(a[0]!.id), a[0]);
  assert.is(await s.get('alw_nope'), null);
  assert.equal(await s.list('acct_a'), a, 'oldest first, as given');
  assert.equal(
    (await s.all()).map((w) => w.account),
    ['acct_a', 'acct_a', 'acct_a', 'acct_b', 'acct_b'],
  );
  const paused = { at: '2026-11-02T00:00:00.000Z', reason: 'the endpoint failed for 24 hours' };
  await s.setPaused(a[1]!.id, paused);
  assert.equal((await s.get(a[1]!.id))!.paused, paused);
  assert.ok(await s.remove(a[0]!.id));
  assert.not.ok(await s.remove(a[0]!.id), 'removed once');
  assert.ok(await s.add(watch('acct_a'), 3), 'a removed watch frees its place');
  await s.close();
  // Another process's store (a restart; another replica) sees the same.
  const again = await open();
  assert.equal((await again.get(a[1]!.id))!.paused, paused);
  assert.is(await again.get(a[0]!.id), null);
  assert.is((await again.list('acct_a')).length, 3);
  await again.setPaused(a[1]!.id, null);
  assert.is((await again.get(a[1]!.id))!.paused, null);
  await again.close();
}

test('the file store keeps each watch in its own file, written whole, read back by the next process', async () => {
  const dir = tmpDir();
  await conformance(async () => {
    const s = new FileWatchStore(dir);
    await s.open();
    return s;
  });
  const files = fs.readdirSync(path.join(dir, 'watches'));
  assert.is(files.length, 5);
  assert.ok(
    files.every((f) => /^alw_t\d+\.json$/.test(f)),
    `no temporary files left: ${files}`,
  );
  // A damaged file (from outside: writes are atomic) is named and skipped, not fatal.
  fs.writeFileSync(path.join(dir, 'watches', 'alw_bad.json'), '{"id":');
  const unreadable: string[] = [];
  const s = new FileWatchStore(dir, (f) => unreadable.push(f));
  await s.open();
  assert.equal(unreadable, ['alw_bad.json']);
  assert.is((await s.all()).length, 5);
});

test('the file store: concurrent creates of one account stop at the bound', async () => {
  const s = new FileWatchStore(tmpDir());
  await s.open();
  const added = await Promise.all(Array.from({ length: 12 }, () => s.add(watch('acct_c'), 5)));
  assert.is(added.filter(Boolean).length, 5);
  assert.is((await s.list('acct_c')).length, 5);
});

test('the PostgreSQL store: the same behaviour, and the bound holds across two replicas creating at once', async () => {
  const url = await database();
  await conformance(async () => {
    const s = new PgWatchStore(url);
    await s.open();
    return s;
  });
  const replicas = [new PgWatchStore(url), new PgWatchStore(url)];
  await Promise.all(replicas.map((r) => r.open()));
  try {
    const added = await Promise.all(Array.from({ length: 16 }, (_, i) => replicas[i % 2]!.add(watch('acct_d'), 5)));
    assert.is(added.filter(Boolean).length, 5);
    assert.is((await replicas[0]!.list('acct_d')).length, 5);
  } finally {
    await Promise.all(replicas.map((r) => r.close()));
  }
});

test.run();
