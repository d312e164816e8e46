// The orchestrator's probes on a real server over a real PostgreSQL ledger: /livez and /readyz need
// no key; ready while a generation is loaded and the ledger answers; when the database goes away,
// /readyz is a 503 that says why (and nothing more), /livez stays 200 (a restart would not help).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { pollUntil } from '../../core/infra/wait-at-most.ts';
import type { RunningServer } from '../../serve/server.ts';
import { database, stopPostgres } from '../helpers/postgres.ts';
import { pipedSampleDir } from '../helpers/pipeline.ts';
import { testServer } from '../helpers/server.ts';
import { cleanupTmp } from '../helpers/tmp.ts';

let s: RunningServer | undefined;

test.after(async () => {
  await s?.close();
  await stopPostgres();
  cleanupTmp();
});

async function get(path: string): Promise<{ status: number; json: any }> {
  const res = await fetch(`${s!.baseUrl}${path}`);
  return { status: res.status, json: await res.json() };
}

test('/livez and /readyz without a key; /readyz is 503 with its reason while the ledger database is down', async () => {
  const dir = await pipedSampleDir();
  const url = await database();
  s = await testServer(dir, { DATABASE_URL: url });
  assert.equal(await get('/livez'), { status: 200, json: { status: 'alive' } });
  const ready = await get('/readyz');
  assert.equal(ready, { status: 200, json: { status: 'ready', generation: 'g000001' } });
  // /health stays behind the key.
  assert.is((await get('/health')).status, 403);
  await stopPostgres();
  let down = await get('/readyz');
  await pollUntil('the ledger seen down', async () => (down = await get('/readyz')).status === 503, 20_000);
  assert.is(down.json.status, 'not ready');
  assert.equal(down.json.reasons.length, 1);
  assert.match(down.json.reasons[0], /^the ledger (is unavailable \(\w+\)|did not answer within 2000 ms)$/);
  assert.not.match(JSON.stringify(down.json), /postgres(ql)?:\/\/|password/i);
  assert.equal(await get('/livez'), { status: 200, json: { status: 'alive' } });
});

test.run();
