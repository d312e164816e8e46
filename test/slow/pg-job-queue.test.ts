// The pg-boss job queue (serve/queue/pg-task-queue.ts) on a real PostgreSQL: a queue closed while it
// is still starting (a server stopped during its start, a replica told to stop as it takes over a
// job) must not come up afterwards with its workers polling and its connections open, which
// would keep the process alive and take jobs after it said it had stopped.
import pg from 'pg';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { pollUntil } from '../../core/infra/wait-at-most.ts';
import { PgTaskQueue } from '../../serve/queue/pg-task-queue.ts';
import { rejects } from '../helpers/assert.ts';
import { database, stopPostgres } from '../helpers/postgres.ts';

test.after(async () => {
  await stopPostgres();
});

const APP = 'content-intelligence queue';

async function queueConnections(url: string): Promise<number> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    const r = await c.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = $1 AND datname = current_database()',
      [APP],
    );
    return r.rows[0]!.n;
  } finally {
    await c.end();
  }
}

const queueOn = (url: string) =>
  new PgTaskQueue({ databaseUrl: url, queue: 'analysis-jobs', concurrency: 2, attempts: 1, expireSeconds: 10, onError: () => undefined });

test('a queue closed while it starts ends stopped: no workers, no connections, no jobs taken', async () => {
  const url = await database();
  const ran: string[] = [];
  const q = queueOn(url);
  const started = q.start(async (id) => void ran.push(id));
  await q.close();
  await started;
  await rejects(() => q.enqueue('job-after-close'), /not started/);
  // Another queue on the same database puts a job in: the closed one must not take it.
  const other = queueOn(url);
  const otherRan: string[] = [];
  await other.start(async (id) => void otherRan.push(id));
  await other.enqueue('job-1');
  await pollUntil('the open queue to run job-1', () => otherRan.length === 1, 10_000);
  await other.close();
  assert.equal(ran, []);
  await pollUntil('every queue connection to close', async () => (await queueConnections(url)) === 0, 10_000);
  assert.is(await queueConnections(url), 0);
});

test('a started queue closes its connections', async () => {
  const url = await database();
  const q = queueOn(url);
  await q.start(async () => undefined);
  assert.ok((await queueConnections(url)) > 0, 'the queue holds connections while it runs');
  await q.close();
  await pollUntil('every queue connection to close', async () => (await queueConnections(url)) === 0, 10_000);
});

test('a queue with more workers than connections (16 on 4) leaves no worker behind once closed', async () => {
  // Closed as it starts, its workers' first looks for a job still wait for a connection. pg-boss's
  // stop used to end its pool over them: those waits never ended, and pg-boss's one-second check
  // for those workers kept the process alive for good.
  const url = await database();
  const timers = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
  const before = timers();
  for (let round = 0; round < 3; round++) {
    const q = new PgTaskQueue({
      databaseUrl: url,
      queue: 'webhook-deliveries',
      concurrency: 16,
      attempts: 1,
      expireSeconds: 7,
      onError: () => undefined,
    });
    await q.start(async () => undefined);
    await q.close();
  }
  await pollUntil('the closed queues to leave no timer running', () => timers() <= before, 5_000);
  await pollUntil('every queue connection to close', async () => (await queueConnections(url)) === 0, 10_000);
});

test.run();
