// The admin CLI and the loopback admin endpoint, with real processes and a real Koa server on
// 127.0.0.1: direct mode under the ledger lock, endpoint mode while another process holds it.
import fs from 'node:fs';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import Koa from 'koa';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { announceAdminEndpoint, createAdminRouter } from '../ledger/admin-api.ts';
import { Ledger } from '../ledger/ledger.ts';
import { runTs } from './helpers/child.ts';
import { cleanupTmp, tmpDir } from './helpers/tmp.ts';

test.after.each(cleanupTmp);

async function admin(dataDir: string, args: string[], env: Record<string, string> = {}) {
  const r = await runTs('ledger/admin-cli.ts', [...args, '--data-dir', dataDir], env);
  const json = r.out.trim().startsWith('{') ? JSON.parse(r.out.slice(0, r.out.lastIndexOf('}') + 1)) : null;
  return { code: r.code, out: r.out, json };
}

test('direct mode: create an account and a key, top up, show, revoke; JSON out; bad input exits 2', async () => {
  const d = tmpDir();
  const acc = await admin(d, ['accounts', 'create', '--name', 'Acme']);
  assert.is(acc.code, 0, acc.out);
  const id = acc.json.id as string;
  const key = await admin(d, ['keys', 'create', '--account', id, '--name', 'ci']);
  assert.match(key.json.secret, /^sk_[A-Za-z0-9_-]{32}$/);
  const top = await admin(d, ['credits', 'topup', '--account', id, '--credits', '12.34']);
  assert.equal(top.json, { account: id, added: 12.34, balance: 12.34, available: 12.34 });
  const show = await admin(d, ['accounts', 'show', '--account', id]);
  assert.equal([show.json.balance, show.json.keys.length, show.json.keys[0].revokedAt], [12.34, 1, null]);
  assert.not.ok(JSON.stringify(show.json).includes(key.json.secret), 'the secret is shown once only');
  const rev = await admin(d, ['keys', 'revoke', '--key', key.json.id]);
  assert.ok(rev.json.revokedAt);

  assert.is((await admin(d, ['credits', 'topup', '--account', id, '--credits', '0.0000001'])).code, 2);
  assert.is((await admin(d, ['credits', 'topup', '--account', id])).code, 2);
  assert.is((await admin(d, ['frobnicate', 'now'])).code, 2);
  const unknown = await admin(d, ['accounts', 'show', '--account', 'acc_missing']);
  assert.is(unknown.code, 1);
  assert.match(unknown.out, /no account acc_missing/);
});

test('endpoint mode: while a server holds the ledger, the CLI goes through its loopback endpoint with ADMIN_TOKEN', async () => {
  const d = tmpDir();
  const dir = path.join(d, 'ledger');
  const ledger = await Ledger.open({ dir });
  const app = new Koa();
  const router = createAdminRouter(ledger, 'tok-123', '/api');
  app.use(router.routes()).use(router.allowedMethods());
  const server = app.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api`;
  const unannounce = await announceAdminEndpoint(dir, url);
  try {
    const acc = await admin(d, ['accounts', 'create', '--name', 'Live'], { ADMIN_TOKEN: 'tok-123' });
    assert.is(acc.code, 0, acc.out);
    const top = await admin(d, ['credits', 'topup', '--account', acc.json.id, '--credits', '3'], { ADMIN_TOKEN: 'tok-123' });
    assert.is(top.code, 0, top.out);
    // The server's own ledger saw it: one writer, no fork.
    assert.is(ledger.balance(acc.json.id).balance, 3_000_000);

    const noToken = await admin(d, ['accounts', 'show', '--account', acc.json.id], { ADMIN_TOKEN: '' });
    assert.is(noToken.code, 2);
    assert.match(noToken.out, /set ADMIN_TOKEN/);
    const wrong = await admin(d, ['accounts', 'show', '--account', acc.json.id], { ADMIN_TOKEN: 'nope' });
    assert.is(wrong.code, 1);
    assert.match(wrong.out, /admin token required/);

    const post = (cmd: string, body: string, token = 'tok-123') =>
      fetch(`${url}/admin/${cmd}`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` }, body });
    assert.is((await post('credits.topup', '{"account":')).status, 400);
    assert.is((await post('credits.topup', JSON.stringify({ account: acc.json.id, credits: 1, extra: true }))).status, 400);
    assert.is((await post('accounts.delete', '{}')).status, 404);
    assert.is((await post('accounts.show', JSON.stringify({ account: 'acc_x' }))).status, 404);
  } finally {
    await unannounce();
    server.close();
    await ledger.close();
  }
  // The server is gone: the CLI opens the ledger itself and sees the same state.
  assert.not.ok(fs.existsSync(path.join(dir, 'admin-endpoint.json')));
});

test('a process holding the ledger without an endpoint is reported, not raced', async () => {
  const d = tmpDir();
  const ledger = await Ledger.open({ dir: path.join(d, 'ledger') });
  try {
    const r = await admin(d, ['accounts', 'create', '--name', 'x']);
    assert.is(r.code, 1);
    assert.match(r.out, /held by pid \d+/);
  } finally {
    await ledger.close();
  }
});

test.run();
