// One ledger per data directory (docs/ledger.md): export and import between the file ledger and a
// real PostgreSQL keep every balance, key and usage entry (open holds are not carried); and the
// real processes: a file-ledger data directory under a private (0700) folder refused by `npm run
// cluster`, moved with `ledger export` and `cluster --import` onto the cluster's own embedded
// PostgreSQL (its data folder placed where the postgres user can reach it, as root), the same key
// answering with the same balance on a replica, every hint the banner prints run as printed, and
// `npm run serve` / `npm start` on that data directory refused with the commands to run.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { pollUntil } from '../../core/infra/wait-at-most.ts';
import { FileLedgerStore } from '../../ledger/file-ledger-store.ts';
import { exportLedger, readDump } from '../../ledger/admin/ledger-dump.ts';
import { importInto, openLedgerStore } from '../../ledger/open-ledger-store.ts';
import { toMicro } from '../../ledger/money.ts';
import { PgLedgerStore } from '../../ledger/postgres/pg-ledger-store.ts';
import { freePort, PGDATA_LOCATION_FILE } from '../../tools/postgres/embedded.ts';
import { ensureDemoAccount } from '../../serve/billing/demo-account.ts';
import { rejects } from '../helpers/assert.ts';
import { ROOT, runNpm, runTs, spawnNpm } from '../helpers/child.ts';
import { pipedSampleDir } from '../helpers/pipeline.ts';
import { database, stopPostgres } from '../helpers/postgres.ts';
import { cleanupTmp, tmpDir } from '../helpers/tmp.ts';

const C = (credits: number | string) => toMicro(credits);

test.after(async () => {
  await stopPostgres();
  cleanupTmp();
});

async function history(l: FileLedgerStore | PgLedgerStore, account: string) {
  const page = await l.usage(account, { limit: 500 });
  return page.entries.map(({ id: _, ...e }) => e);
}

test('export from the file ledger, import into PostgreSQL and back: balances, keys, usage history equal; open holds not carried', async () => {
  const dir = tmpDir();
  const file = await FileLedgerStore.open({ dir: path.join(dir, 'ledger') });
  const a = await file.createAccount('Acme');
  const b = await file.createAccount('Beta');
  const ka = await file.createKey(a.id, 'ci');
  const kb = await file.createKey(b.id);
  await file.topup(a.id, C(10), 'first order');
  await file.topup(b.id, C('0.5'));
  for (const [i, charge] of [C('0.25'), C(0), C('1.5')].entries()) {
    const h = await file.hold({ account: a.id, key: ka.key.id, amountMicro: C(2), ref: `req${i}`, what: 'search' });
    await file.settle(h.ok ? h.hold.id : '', charge);
  }
  const refunded = await file.hold({ account: a.id, key: ka.key.id, amountMicro: C(1), ref: 'req9', what: 'job' });
  await file.release(refunded.ok ? refunded.hold.id : '', 'failed');
  await file.revokeKey(kb.key.id);
  // Open at the export: not charged, so not carried (the balance is the settled one, nothing held).
  const open = await file.hold({ account: b.id, key: null, amountMicro: C('0.2'), ref: 'open', what: 'job' });
  assert.ok(open.ok);
  const out = path.join(dir, 'ledger.jsonl');
  assert.equal(await exportLedger(file, out), { t: 'end', accounts: 2, keys: 2, entries: 6 });
  assert.is((fs.statSync(out).mode & 0o777).toString(8), '600');
  assert.not.match(fs.readFileSync(out, 'utf8'), new RegExp(ka.secret), 'no secret in an export');

  const url = await database();
  const counts = await importInto({ dir: path.join(dir, 'ledger'), databaseUrl: url }, await readDump(out));
  assert.equal(counts, { accounts: 2, keys: 2, entries: 6 });
  const pg = await PgLedgerStore.open({ databaseUrl: url });
  try {
    for (const id of [a.id, b.id]) {
      const before = await file.balance(id);
      assert.equal(await pg.balance(id), { balanceMicro: before.balanceMicro, heldMicro: 0, availableMicro: before.balanceMicro });
      assert.equal(await history(pg, id), await history(file, id));
    }
    assert.is((await pg.keyBySecret(ka.secret))?.id, ka.key.id, 'the same secret finds its key');
    assert.ok((await pg.keyBySecret(kb.secret))?.revokedAt, 'a revoked key stays revoked');
    assert.equal(await pg.openHolds(), []);
    // The data directory now records that PostgreSQL ledger.
    const rec = JSON.parse(fs.readFileSync(path.join(dir, 'ledger', 'backend.json'), 'utf8'));
    assert.equal([rec.kind, rec.ledgerId], ['postgres', await pg.ledgerId()]);
    assert.not.match(JSON.stringify(rec), /:postgres@/, 'no password recorded for a DATABASE_URL');
    // Into a ledger that holds accounts: refused, nothing written.
    const dumpAgain = await readDump(out);
    await rejects(() => importInto({ dir: path.join(dir, 'ledger'), databaseUrl: url }, dumpAgain), /already holds 2 account/);
    // And back, from PostgreSQL into an empty file ledger elsewhere.
    const back = path.join(dir, 'back.jsonl');
    await exportLedger(pg, back);
    const dir2 = tmpDir();
    await importInto({ dir: path.join(dir2, 'ledger') }, await readDump(back));
    const again = await FileLedgerStore.open({ dir: path.join(dir2, 'ledger') });
    for (const id of [a.id, b.id]) assert.equal(await history(again, id), await history(file, id));
    await again.close();
  } finally {
    await pg.close();
    await file.close();
  }
  // A cut or edited export is refused whole.
  const lines = fs.readFileSync(out, 'utf8').trimEnd().split('\n');
  fs.writeFileSync(out, lines.slice(0, -2).join('\n') + '\n');
  await rejects(() => readDump(out), /cut short or edited/);
  fs.writeFileSync(out, lines.map((l) => l.replace('"balanceAfterMicro":10000000', '"balanceAfterMicro":11000000')).join('\n') + '\n');
  await rejects(() => readDump(out), /does not follow/);
});

test('a data directory records its ledger: the other backend, or another PostgreSQL database, is refused with what to run', async () => {
  const dir = tmpDir();
  const ledgerDir = path.join(dir, 'ledger');
  await (await openLedgerStore({ dir: ledgerDir })).close();
  const url = await database();
  await rejects(
    () => openLedgerStore({ dir: ledgerDir, databaseUrl: url }),
    new RegExp(
      'uses the file ledger .*but DATABASE_URL \\(postgresql://postgres:\\*\\*\\*@.*\\) asks for a PostgreSQL ledger: ' +
        'keep it: .*npm start, without DATABASE_URL; ' +
        'move it: .*npm run admin -- ledger export --out ledger\\.jsonl, then DATABASE_URL=\\.\\.\\. .*npm run admin -- ledger import --into postgres',
    ),
  );
  const pgDir = path.join(tmpDir(), 'ledger');
  await (await openLedgerStore({ dir: pgDir, databaseUrl: url })).close();
  await rejects(() => openLedgerStore({ dir: pgDir }), /uses the PostgreSQL ledger lgr_\w+ .*but DATABASE_URL is not set/);
  const other = await database();
  await rejects(
    () => openLedgerStore({ dir: pgDir, databaseUrl: other }),
    /uses the PostgreSQL ledger (lgr_\w+) .*asks for the PostgreSQL ledger lgr_\w+/,
  );
  // The same database again: fine.
  await (await openLedgerStore({ dir: pgDir, databaseUrl: url })).close();
});

test('npm run cluster on a file-ledger DATA_DIR under a private folder: refused, moved with ledger export and --import; hints run as printed', async () => {
  const template = await pipedSampleDir();
  const priv = tmpDir('ci-private-');
  fs.chmodSync(priv, 0o700);
  const dir = path.join(priv, 'data');
  fs.cpSync(template, dir, { recursive: true });
  const env = {
    DATA_DIR: dir,
    LOG_LEVEL: 'warn',
    SEARCH_THREADS: '0',
    CLUSTER_PG_PORT: String(await freePort()),
    // Free ports of their own: PORT+1 may be another test's.
    PORT: '0',
  };
  const admin = async (...args: string[]) => {
    const r = await runTs('ledger/admin/admin-cli.ts', args, { DATA_DIR: dir });
    assert.is(r.code, 0, r.out);
    return JSON.parse(r.out);
  };
  // What `npm start` made on its first start: the demo account on the file ledger, its key in demo-key.json.
  const first = await openLedgerStore({ dir: path.join(dir, 'ledger') });
  const demo = (await ensureDemoAccount(first, dir, 1)).demo;
  await first.close();
  const acme = await admin('accounts', 'create', '--name', 'Acme');
  await admin('credits', 'topup', '--account', acme.id, '--credits', '2.5');
  const key = await admin('keys', 'create', '--account', acme.id);

  const refused = await runNpm('cluster', ['--replicas', '2'], env);
  assert.is(refused.code, 2, refused.out);
  assert.is(refused.out.trim().split('\n').length, 1, refused.out);
  assert.match(
    refused.out,
    /^cluster: .*uses the file ledger .*npm run admin -- ledger export --out ledger\.jsonl, then .*npm run cluster -- --import ledger\.jsonl/,
  );

  const exported = path.join(priv, 'ledger.jsonl');
  assert.is((await admin('ledger', 'export', '--out', exported)).accounts, 2);
  const cluster = spawnNpm('cluster', ['--replicas', '2', '--import', exported], env);
  let pgdata: string | null = null;
  try {
    await pollUntil('the cluster', () => /Ctrl-C stops the replicas/.test(cluster.out()) || cluster.proc.exitCode !== null, 240_000);
    const out = cluster.out();
    assert.match(out, /cluster: imported .*: 2 accounts, 2 keys, 2 usage entries/);
    const replicas = [...out.matchAll(/replica \d: (http:\S+)/g)].map((m) => m[1]!);
    assert.is(replicas.length, 2, out);
    // The key made on the file ledger answers on a replica with the balance it had.
    const usage = await fetch(`${replicas[1]}/usage`, { headers: { 'x-api-key': key.secret } });
    assert.is(usage.status, 200);
    const body = (await usage.json()) as { balance: number; entries: Array<{ type: string; credits: number }> };
    assert.equal([body.balance, body.entries.map((e) => [e.type, e.credits])], [2.5, [['topup', 2.5]]]);
    if (process.getuid?.() === 0) {
      // The postgres user cannot enter the private folder: PostgreSQL's data lives elsewhere, recorded, and the folder stays closed.
      pgdata = JSON.parse(fs.readFileSync(path.join(dir, 'postgres', PGDATA_LOCATION_FILE), 'utf8')).pgdata;
      assert.ok(pgdata && !pgdata.startsWith(priv) && fs.existsSync(path.join(pgdata, 'PG_VERSION')), out);
      assert.match(out, new RegExp(`PostgreSQL's data folder: ${pgdata}: .*cannot enter ${priv} \\(mode 0700\\)`));
      assert.is(fs.statSync(priv).mode & 0o777, 0o700);
    }
    // The demo key of this ledger: the file ledger's was imported with it, so it is that one, not a new account.
    const demoFile = /demo key: (\S+)/.exec(out)![1]!;
    assert.is(demoFile, path.join(dir, 'demo-key.json'));
    assert.not.ok(fs.existsSync(path.join(dir, 'demo-key.postgres.json')), 'no second demo account');
    const demoUsage = await fetch(`${replicas[0]}/usage`, { headers: { 'x-api-key': demo.secret } });
    assert.is(((await demoUsage.json()) as { balance: number }).balance, 1);
    // The admin hint, run as printed (in bash, from the checkout, with nothing else set).
    const hint = /admin: {4}(.+)$/m.exec(out)![1]!;
    const made = JSON.parse(
      execFileSync('bash', ['-c', hint.replace('npm run admin', 'npm run -s admin')], { cwd: ROOT, encoding: 'utf8' }),
    );
    assert.is(made.name, 'Acme');
    const k2 = await admin('keys', 'create', '--account', made.id);
    assert.is((await fetch(`${replicas[0]}/health`, { headers: { 'x-api-key': k2.secret } })).status, 200);
    // A start without DATABASE_URL on this data directory is refused, saying how to keep or move the ledger.
    for (const entry of ['serve/main.ts', 'app/start.ts']) {
      const r = await runTs(entry, [], { DATA_DIR: dir, PORT: '0' });
      assert.is(r.code, 1, r.out);
      assert.match(
        r.out,
        /uses the PostgreSQL ledger lgr_\w+ \(.*npm run cluster's own server\).*DATABASE_URL is not set.*keep it: .*npm run cluster; move it to the file /,
      );
    }
  } finally {
    cluster.stop('SIGINT');
    await cluster.exited;
    if (pgdata) fs.rmSync(pgdata, { recursive: true, force: true });
  }
  // With the cluster stopped, the admin CLI says so in one line.
  const down = await runTs('ledger/admin/admin-cli.ts', ['accounts', 'show', '--account', acme.id], { DATA_DIR: dir });
  assert.is(down.code, 1);
  assert.match(down.out, /npm run cluster's PostgreSQL .* is not running: start .*npm run cluster first/);
});

test.run();
