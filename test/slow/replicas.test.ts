// Two API replicas (real server processes) over one DATA_DIR and one real PostgreSQL: what one
// replica's searches form, the other reads; a replica killed with SIGKILL under billed load loses
// no acknowledged charge and charges nothing twice (tools/replica-trial.ts); and two pipeline
// runs never overlap, whichever machine starts them (the PostgreSQL advisory lock).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import fs from 'node:fs';
import path from 'node:path';
import { loadConfig } from '../../core/infra/config.ts';
import { createLogger } from '../../core/infra/log.ts';
import { acquireAdvisoryLock } from '../../core/infra/postgres/advisory-lock.ts';
import { pollUntil } from '../../core/infra/wait-at-most.ts';
import { PIPELINE_LOCK, runStages } from '../../pipeline/run/runner.ts';
import { DEMO_KEY_FILES } from '../../serve/billing/demo-account.ts';
import { replicaKillTrial, startReplica, stopReplica } from '../../tools/replica-trial.ts';
import { rejects } from '../helpers/assert.ts';
import { spawnTs } from '../helpers/child.ts';
import { pipedSampleDir } from '../helpers/pipeline.ts';
import { database, stopPostgres } from '../helpers/postgres.ts';
import { cleanupTmp, tmpDir } from '../helpers/tmp.ts';

let template: string;

test.before(async () => {
  template = await pipedSampleDir();
});

test.after(async () => {
  await stopPostgres();
  cleanupTmp();
});

async function api(baseUrl: string, key: string, method: string, p: string, body?: unknown) {
  const res = await fetch(`${baseUrl}${p}`, {
    method,
    headers: { 'x-api-key': key, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  return { status: res.status, json: (await res.json()) as any };
}

test('what a search on one replica forms, the other reads: emergent narratives, jobs, usage; the admin CLI beside them', async () => {
  const dir = tmpDir();
  fs.cpSync(template, dir, { recursive: true });
  const url = await database();
  const a = await startReplica(dir, url);
  const b = await startReplica(dir, url);
  try {
    const key = (JSON.parse(fs.readFileSync(path.join(dir, DEMO_KEY_FILES.postgres), 'utf8')) as { secret: string }).secret;
    const s = await api(a.baseUrl, key, 'POST', '/search', { query: 'coffee', limit: 100, window: 'all' });
    assert.is(s.status, 200);
    const emergent = (s.json.narratives as Array<{ id: string; source: string }>).filter((n) => n.source === 'emergent');
    assert.ok(emergent.length > 0, 'the search formed emergent narratives');
    for (const n of emergent) {
      let r: Awaited<ReturnType<typeof api>> | null = null;
      await pollUntil(
        `${n.id} on the other replica`,
        async () => (r = await api(b.baseUrl, key, 'GET', `/narratives/${n.id}`)).status === 200,
        10_000,
      );
      assert.is(r!.json.id ?? r!.json.narrative?.id ?? n.id, n.id);
      assert.is((await api(b.baseUrl, key, 'GET', `/narratives/${n.id}/trajectory`)).json.id, n.id);
    }
    assert.is((await api(b.baseUrl, key, 'GET', '/narratives/em-nope')).status, 404);
    const job = await api(b.baseUrl, key, 'POST', '/intelligence/jobs', { kind: 'records', query: 'music', limit: 10, window: 'all' });
    assert.is(job.status, 202);
    let done: any = null;
    await pollUntil(
      'the job',
      async () => (done = (await api(a.baseUrl, key, 'GET', `/intelligence/jobs/${job.json.jobId}`)).json).status === 'succeeded',
      60_000,
    );
    const usage = await api(a.baseUrl, key, 'GET', '/usage?limit=10');
    assert.equal(
      usage.json.entries
        .filter((e: { type: string }) => e.type === 'settlement')
        .map((e: { credits: number }) => e.credits)
        .sort(),
      [done.charged, s.json.usage.credits].sort(),
    );
    assert.is((await api(b.baseUrl, key, 'GET', '/health')).json.ledger.backend, 'postgres');
    // The admin CLI writes to the same PostgreSQL beside the running replicas; its key works on both.
    const admin = async (...args: string[]) => {
      const c = spawnTs('ledger/admin/admin-cli.ts', args, { DATABASE_URL: url, DATA_DIR: dir });
      const { code } = await c.exited;
      assert.is(code, 0, c.out());
      return JSON.parse(c.out()) as any;
    };
    const acme = await admin('accounts', 'create', '--name', 'Acme');
    await admin('credits', 'topup', '--account', acme.id, '--credits', '0.5');
    const acmeKey = await admin('keys', 'create', '--account', acme.id);
    const paid = await api(a.baseUrl, acmeKey.secret, 'POST', '/search', { query: 'coffee', limit: 10, window: 'all' });
    assert.is(paid.status, 200);
    const left = (500_000 - Math.round(paid.json.usage.credits * 1e6)) / 1e6;
    assert.is((await api(b.baseUrl, acmeKey.secret, 'GET', '/usage')).json.balance, left);
    assert.is((await admin('accounts', 'show', '--account', acme.id)).balance, left);
    assert.is((await api(b.baseUrl, acmeKey.secret, 'POST', '/search', { query: 'coffee', limit: 100, window: 'all' })).status, 402);
    await admin('keys', 'revoke', '--key', acmeKey.id);
    assert.is((await api(b.baseUrl, acmeKey.secret, 'GET', '/health')).status, 403);
  } finally {
    await Promise.all([stopReplica(a), stopReplica(b)]);
  }
});

test('a replica killed with SIGKILL under billed load: nothing acknowledged lost, nothing charged twice, its holds released', async () => {
  const r = await replicaKillTrial({ template, databaseUrl: await database(), workDir: tmpDir(), killAfter: 25, after: 25 });
  assert.equal(r.details, []);
  assert.ok(r.searchesOnKilled >= 25 && r.searches >= 50, JSON.stringify(r));
  assert.ok(r.jobs > 0 && r.jobsSucceeded === r.jobs, JSON.stringify(r));
  assert.equal([r.lost, r.chargedTwice, r.openHoldsAfter, r.balanceMismatch, r.negative, r.replayOk], [0, 0, 0, false, false, true]);
});

test('one pipeline run at a time per PostgreSQL: a run is refused while another machine holds the lock', async () => {
  const url = await database();
  const elsewhere = await acquireAdvisoryLock(url, PIPELINE_LOCK);
  const config = loadConfig({ DATA_DIR: tmpDir(), DATABASE_URL: url, LOG_LEVEL: 'silent' });
  const log = createLogger('test', 'silent');
  await rejects(() => runStages([], { config, log }), /another pipeline run \(on this or another machine\) holds the lock/);
  await rejects(() => acquireAdvisoryLock(url, PIPELINE_LOCK), /holds the PostgreSQL lock/);
  await elsewhere.release();
  const run = await runStages([], { config, log });
  assert.equal(run.stages, []);
  // Released after the run: the next one takes it.
  await (await acquireAdvisoryLock(url, PIPELINE_LOCK)).release();
});

test.run();
