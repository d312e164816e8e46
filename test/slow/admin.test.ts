// The admin CLI and the loopback admin endpoint, with real processes: direct mode under the ledger
// lock, endpoint mode while a real server (npm run serve, npm start) holds the ledger.
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { pollUntil } from '../../core/infra/wait-at-most.ts';
import { ADMIN_ENDPOINT_FILE } from '../../ledger/admin/admin-api.ts';
import { FileLedgerStore } from '../../ledger/file-ledger-store.ts';
import { runNpm, runTs, spawnNpm } from '../helpers/child.ts';
import { pipedSampleDir } from '../helpers/pipeline.ts';
import { cleanupTmp, tmpDir } from '../helpers/tmp.ts';

test.after.each(cleanupTmp);

/**
 * The admin CLI on `dataDir`: `npm run admin` as a user types it where `npm` is set (a few calls of
 * each test), its entry point under node and tsx elsewhere (the same command, without npm's start).
 */
async function admin(dataDir: string, args: string[], env: Record<string, string> = {}, npm = false) {
  const r = await (npm
    ? runNpm('admin', [...args, '--data-dir', dataDir], env)
    : runTs('ledger/admin/admin-cli.ts', [...args, '--data-dir', dataDir], env));
  const json = r.out.trim().startsWith('{') ? JSON.parse(r.out.slice(0, r.out.lastIndexOf('}') + 1)) : null;
  return { code: r.code, out: r.out, json };
}

test('direct mode: create an account and a key, top up, show, revoke; JSON out; bad input exits 2', async () => {
  const d = tmpDir();
  const acc = await admin(d, ['accounts', 'create', '--name', 'Acme'], {}, true);
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
  assert.is((await admin(d, ['frobnicate', 'now'], {}, true)).code, 2);
  const unknown = await admin(d, ['accounts', 'show', '--account', 'acc_missing'], {}, true);
  assert.is(unknown.code, 1);
  assert.match(unknown.out, /no account acc_missing/);
});

test('every command with bad values: one JSON line {error} that says what is wrong, exit 2 for bad arguments, 1 for a refusal', async () => {
  const d = tmpDir();
  const acc = await admin(d, ['accounts', 'create', '--name', 'Acme']);
  const id = acc.json.id as string;
  const topup = (...credits: string[]) => ['credits', 'topup', '--account', id, ...credits];
  const cases: Array<[string[], number, string]> = [
    [topup('--credits', '-5'), 2, 'credits must be positive, got -5'],
    [topup('--credits=-5'), 2, 'credits must be positive, got -5'],
    [topup('--credits', '-0.25'), 2, 'credits must be positive, got -0.25'],
    [topup('--credits', '0'), 2, 'credits must be positive, got 0'],
    [topup('--credits', 'abc'), 2, 'credits must be a number of credits such as 50 or 0.25, got "abc"'],
    [topup('--credits', '1e3'), 2, 'credits must be a number of credits such as 50 or 0.25, got "1e3"'],
    [topup('--credits', '0.0000001'), 2, 'credits has more than 6 decimals (the smallest amount is 0.000001 credits), got 0.0000001'],
    [topup('--credits', '2000000000'), 2, 'credits must be at most 1000000000, got 2000000000'],
    [topup(), 2, 'credits topup needs --credits'],
    [topup('--credits'), 2, '--credits needs a value (one that starts with a dash is written --credits=-VALUE)'],
    [topup('--credits', '5', '--note', '-x'), 2, '--note needs a value (one that starts with a dash is written --note=-VALUE)'],
    [topup('--credits', '5', '--key', 'k'), 2, 'credits topup takes no --key (it takes --account, --credits, --note)'],
    [['credits', 'topup', '--account', 'acc_missing', '--credits', '5'], 1, 'no account acc_missing'],
    [['accounts', 'create', '--name', '  '], 2, 'name must not be empty'],
    [['accounts', 'create'], 2, 'accounts create needs --name'],
    [['accounts', 'show', '--account', 'acc_missing'], 1, 'no account acc_missing'],
    [['keys', 'create', '--account', 'acc_missing'], 1, 'no account acc_missing'],
    [['keys', 'create', '--account', id, '--name', 'x'.repeat(201)], 2, 'name must be at most 200 characters'],
    [['keys', 'revoke', '--key', 'key_missing'], 1, 'no key key_missing'],
    [['keys', 'revoke', '--key', ''], 2, 'key must not be empty'],
    [['keys', 'revoke', '--bogus'], 2, 'unknown option --bogus (see --help)'],
    [['frobnicate', 'now'], 2, 'unknown command "frobnicate now"'],
  ];
  for (const [args, code, error] of cases) {
    const r = await runTs('ledger/admin/admin-cli.ts', [...args, '--data-dir', d]);
    assert.is(r.code, code, `${args.join(' ')}: ${r.out}`);
    assert.equal(JSON.parse(r.out.split('\n')[0]!), { error }, args.join(' '));
  }
  assert.is((await admin(d, ['accounts', 'show', '--account', id])).json.balance, 0, 'nothing was added');
});

// The real thing: a server started as a user starts it (npm run serve, npm start), the real CLI
// (npm run admin for the first command, its entry point for the others) beside it, every command, with the default prefix and a custom one, with
// ADMIN_TOKEN set and without (then the server's own token in its owner-only announcement).
const SERVERS: Array<{ script: string; env: Record<string, string> }> = [
  { script: 'serve', env: { ADMIN_TOKEN: 'tok-123' } },
  { script: 'start', env: { ADMIN_TOKEN: 'tok-456', SERVICE_PREFIX: '/v2/ci', PIPELINE_SCHEDULE: '{"run":"0 0 1 1 *"}' } },
  { script: 'serve', env: { SERVICE_PREFIX: '/ci' } },
];

test('endpoint mode: every admin command works against a server started by npm run serve and npm start', async () => {
  const d = await pipedSampleDir();
  const announce = path.join(d, 'ledger', ADMIN_ENDPOINT_FILE);
  for (const { script, env } of SERVERS) {
    const what = `npm run ${script} with ${JSON.stringify(env)}`;
    const server = spawnNpm(script, [], { DATA_DIR: d, PORT: '0', LOG_LEVEL: 'info', ...env });
    try {
      await pollUntil(`${what} to serve`, () => /"baseUrl":"[^"]+".*serving/.test(server.out()) || server.proc.exitCode !== null, 120_000);
      const baseUrl = /"baseUrl":"([^"]+)"/.exec(server.out())![1]!;
      assert.ok(baseUrl.endsWith(env.SERVICE_PREFIX ?? '/api'), baseUrl);
      const a = JSON.parse(fs.readFileSync(announce, 'utf8'));
      assert.is(a.url, `${baseUrl}/admin`, what);
      assert.is((fs.statSync(announce).mode & 0o777).toString(8), '600', 'the announcement is readable by its owner only');
      // A token the operator set is never written down; a token the server made is, for the CLI.
      assert.is('token' in a, !('ADMIN_TOKEN' in env), what);
      const cli = (args: string[], extra: Record<string, string> = {}, npm = false) =>
        admin(d, args, { ...('ADMIN_TOKEN' in env ? { ADMIN_TOKEN: env.ADMIN_TOKEN } : {}), ...extra }, npm);

      const acc = await cli(['accounts', 'create', '--name', 'Live'], {}, true);
      assert.is(acc.code, 0, `${what}: ${acc.out}`);
      const key = await cli(['keys', 'create', '--account', acc.json.id, '--name', 'ci']);
      assert.is(key.code, 0, key.out);
      const top = await cli(['credits', 'topup', '--account', acc.json.id, '--credits', '3']);
      assert.equal(top.json, { account: acc.json.id, added: 3, balance: 3, available: 3 }, top.out);
      const show = await cli(['accounts', 'show', '--account', acc.json.id]);
      assert.equal([show.json.balance, show.json.keys.length], [3, 1], show.out);
      // The running server sees all of it at once: one writer, no fork.
      const usage = await fetch(`${baseUrl}/usage`, { headers: { 'x-api-key': key.json.secret } });
      assert.is(usage.status, 200);
      assert.is(((await usage.json()) as { balance: number }).balance, 3);
      const rev = await cli(['keys', 'revoke', '--key', key.json.id]);
      assert.is(rev.code, 0, rev.out);
      assert.is(
        (await fetch(`${baseUrl}/health`, { headers: { 'x-api-key': key.json.secret } })).status,
        403,
        'a revoked key is refused at once',
      );

      if ('ADMIN_TOKEN' in env) {
        const noToken = await admin(d, ['accounts', 'show', '--account', acc.json.id], { ADMIN_TOKEN: '' });
        assert.is(noToken.code, 2);
        assert.match(noToken.out, /set the same ADMIN_TOKEN/);
        const wrong = await admin(d, ['accounts', 'show', '--account', acc.json.id], { ADMIN_TOKEN: 'nope' });
        assert.is(wrong.code, 1);
        assert.match(wrong.out, /admin token required/);
        const post = (cmd: string, body: string) =>
          fetch(`${a.url}/${cmd}`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', authorization: `Bearer ${env.ADMIN_TOKEN}` },
            body,
          });
        assert.is((await post('credits.topup', '{"account":')).status, 400);
        // Bad values are refused by the CLI before it calls the server, as in direct mode; a body that is not JSON by type, by the endpoint.
        const negative = await cli(['credits', 'topup', '--account', acc.json.id, '--credits', '-5']);
        assert.equal([negative.code, negative.json], [2, { error: 'credits must be positive, got -5' }], negative.out);
        const asForm = await fetch(`${a.url}/credits.topup`, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Bearer ${env.ADMIN_TOKEN}` },
          body: JSON.stringify({ account: acc.json.id, credits: 1 }),
        });
        assert.is(asForm.status, 415);
        assert.match(((await asForm.json()) as { error: string }).error, /must be JSON sent with Content-Type: application\/json/);
        assert.is((await post('credits.topup', JSON.stringify({ account: acc.json.id, credits: 1, extra: true }))).status, 400);
        assert.is((await post('accounts.delete', '{}')).status, 404);
        const missing = await post('accounts.show', JSON.stringify({ account: 'acc_x' }));
        assert.is(missing.status, 404);
        assert.type(((await missing.json()) as { request_id?: string }).request_id, 'string');
      }
    } finally {
      server.stop();
      await server.exited;
    }
    // The server is gone and says so: the CLI opens the ledger itself.
    assert.not.ok(fs.existsSync(announce), `${what} removed its announcement`);
  }
  const direct = await admin(d, ['accounts', 'create', '--name', 'After'], {}, true);
  assert.is(direct.code, 0, direct.out);
});

test('a process holding the ledger without an endpoint is reported, not raced', async () => {
  const d = tmpDir();
  const ledger = await FileLedgerStore.open({ dir: path.join(d, 'ledger') });
  try {
    const r = await admin(d, ['accounts', 'create', '--name', 'x'], {}, true);
    assert.is(r.code, 1);
    assert.match(r.out, /held by pid \d+/);
  } finally {
    await ledger.close();
  }
});

test.run();
