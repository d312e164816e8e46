// The bound on one process's job queue (JOB_QUEUE_MAX, serve/queue/memory-task-queue.ts): a submit
// the queue has no room for is a JSON 503 naming the queue, with Retry-After, and nothing is held;
// and the in-memory queue's own count of what waits, now or for later.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { toMicro } from '../../ledger/money.ts';
import { MemoryTaskQueue } from '../../serve/queue/memory-task-queue.ts';
import type { RunningServer } from '../../serve/server.ts';
import { callApi } from '../helpers/http.ts';
import { pipedSampleDir } from '../helpers/pipeline.ts';
import { testServer } from '../helpers/server.ts';
import { cleanupTmp } from '../helpers/tmp.ts';

test.after(cleanupTmp);

test('a full job queue: POST /intelligence/jobs is a JSON 503 naming the queue, with Retry-After; nothing held', async () => {
  const s: RunningServer = await testServer(await pipedSampleDir(), { JOB_QUEUE_MAX: '0' });
  try {
    const a = await s.ledger.createAccount('queue-bound');
    await s.ledger.topup(a.id, toMicro('100'));
    const { secret } = await s.ledger.createKey(a.id);
    const r = await callApi(s.baseUrl, secret, 'POST', '/intelligence/jobs', {
      body: { kind: 'records', query: 'coffee', limit: 10, window: 'all' },
    });
    assert.is(r.status, 503);
    assert.match(r.headers.get('content-type') ?? '', /application\/json/);
    assert.is(r.headers.get('retry-after'), '5');
    assert.is(r.json.queue, 'jobs');
    assert.match(r.json.error, /job queue is full/);
    assert.type(r.json.request_id, 'string');
    const b = await s.ledger.balance(a.id);
    assert.is(b.availableMicro, toMicro('100'), 'nothing is held');
  } finally {
    await s.close();
  }
});

test('the in-memory queue has room until `capacity` tasks wait, counting those queued for later', async () => {
  const q = new MemoryTaskQueue(1, () => undefined, 2);
  assert.ok(q.hasRoom());
  await q.enqueue('a');
  assert.ok(q.hasRoom());
  await q.enqueue('b', new Date(Date.now() + 60_000));
  assert.not.ok(q.hasRoom(), 'one now and one for later fill a queue of two');
  await q.close();
});

test.run();
