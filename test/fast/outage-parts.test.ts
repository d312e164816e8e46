// The small parts a PostgreSQL outage leans on: which errors are the database out of reach (and
// so a 503 and a write kept for later, not a 500), the bounded cache of key verdicts, and the
// cluster's restart backoff.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import net from 'node:net';
import pg from 'pg';
import { backoffDelay } from '../../core/infra/backoff.ts';
import { isConnectionLoss } from '../../core/infra/postgres/connection-loss.ts';
import type { ApiKey } from '../../ledger/ledger-store.ts';
import { KeyVerdicts } from '../../serve/http/key-verdicts.ts';

const withCode = (code: string, message = 'x') => Object.assign(new Error(message), { code });

test('connection loss: refused, reset, cut, shutting down; a query PostgreSQL refused is not', async () => {
  // A real refused connection, from node-postgres itself: a port nothing listens on.
  const port = await new Promise<number>((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const p = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(p));
    });
  });
  const client = new pg.Client({ connectionString: `postgresql://u:p@127.0.0.1:${port}/db` });
  const refused = await client.connect().then(
    () => null,
    (err: unknown) => err,
  );
  assert.ok(refused, 'nothing listens there');
  assert.ok(isConnectionLoss(refused), String(refused));
  for (const code of ['ECONNRESET', 'ETIMEDOUT', 'EPIPE', '57P01', '57P03', '08006']) assert.ok(isConnectionLoss(withCode(code)), code);
  assert.ok(isConnectionLoss(new Error('Connection terminated unexpectedly')));
  assert.ok(isConnectionLoss(new Error('timeout exceeded when trying to connect')));
  assert.ok(isConnectionLoss(new Error('Query read timeout')), 'a server that hangs (query_timeout)');
  assert.ok(isConnectionLoss(Object.assign(new Error('wrapped'), { cause: withCode('ECONNREFUSED') })));
  // What PostgreSQL answers to a bad query, or a constraint, is the query's fault: a 500, never retried.
  for (const code of ['23505', '42P01', '40P01', '22003']) assert.not.ok(isConnectionLoss(withCode(code)), code);
  assert.not.ok(isConnectionLoss(new Error('settlement exceeds the hold')));
  assert.not.ok(isConnectionLoss(null));
  assert.not.ok(isConnectionLoss('ECONNREFUSED'));
});

const key = (id: string): ApiKey => ({ id, account: 'acc_1', name: 'k', hash: 'h', createdAt: '2026-12-01T00:00:00Z', revokedAt: null });

test('key verdicts: recalled within their age, forgotten on a refusal, the least recently seen dropped past capacity', () => {
  const v = new KeyVerdicts(1_000, 2);
  v.remember('a', key('a'), 0);
  assert.is(v.recall('a', 1_000)?.id, 'a');
  assert.is(v.recall('a', 1_001), null, 'older than the bound');
  v.remember('a', key('a'), 2_000);
  v.remember('b', key('b'), 2_000);
  v.forget('a');
  assert.is(v.recall('a', 2_000), null, 'a refusal (revoked, unknown) forgets the verdict');
  v.remember('c', key('c'), 2_001);
  v.remember('d', key('d'), 2_002);
  assert.is(v.recall('b', 2_002), null, 'past capacity the oldest goes');
  assert.is(v.recall('d', 2_002)?.id, 'd');
  const off = new KeyVerdicts(0);
  off.remember('a', key('a'), 0);
  assert.is(off.recall('a', 0), null, 'KEY_VERDICT_SECONDS=0 keeps none');
});

test("the cluster's backoff: longer after each failure in a row, at most its cap", () => {
  assert.equal(
    [1, 2, 3, 4, 5, 6, 7, 20].map((n) => backoffDelay(n, 1_000, 30_000)),
    [1_000, 2_000, 4_000, 8_000, 16_000, 30_000, 30_000, 30_000],
  );
});

test.run();
