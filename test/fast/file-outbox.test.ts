// The file outbox's journal over a long run (serve/alerts/file-outbox-store.ts): once it holds four times
// the lines of the state it keeps (each watch's newest 100 events and 200 attempts), it is
// rewritten from memory; a reopen then reads back exactly the state before, and a pending event
// still pending, to be queued again.
import fs from 'node:fs';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { MemoryTaskQueue } from '../../serve/queue/memory-task-queue.ts';
import { FileOutboxStore } from '../../serve/alerts/file-outbox-store.ts';
import { eventFor, watchFor } from '../helpers/alerts.ts';
import { cleanupTmp, tmpDir } from '../helpers/tmp.ts';

test.after(() => cleanupTmp());

const lines = (file: string) => fs.readFileSync(file, 'utf8').split('\n').filter(Boolean).length;

test('the journal is compacted as it grows, and a reopen reads back the same events, attempts and pending work', async () => {
  const dir = tmpDir();
  // A queue that is never started: entries are taken, nothing runs (the test plays the runs).
  const queue = new MemoryTaskQueue(1, () => undefined);
  const book = new FileOutboxStore(dir, undefined, 50);
  assert.equal(await book.open(), []);
  const w = watchFor('http://127.0.0.1:9/hook');
  let most = 0;
  for (let i = 0; i < 600; i++) {
    const e = eventFor(w, i);
    assert.equal(await book.add([e], new Date(), queue), [e]);
    const claim = await book.lease(e.id, 1, new Date(), 1000);
    assert.ok('entry' in claim, 'a new event is claimed by its first turn');
    const at = new Date().toISOString();
    await book.record(
      e.id,
      1,
      {
        attempt: { event_id: e.id, watch_id: w.id, attempt: 1, at, status: 200, error: null, latency_ms: 3, outcome: 'delivered' },
        status: 'delivered',
        next_attempt_at: null,
      },
      queue,
    );
    most = Math.max(most, lines(book.file));
  }
  // One more, left pending with a retry due later.
  const last = eventFor(w, 600);
  await book.add([last], new Date(), queue);
  await book.lease(last.id, 1, new Date(), 1000);
  const retryAt = new Date(Date.now() + 60_000);
  await book.record(
    last.id,
    1,
    {
      attempt: {
        event_id: last.id,
        watch_id: w.id,
        attempt: 1,
        at: new Date().toISOString(),
        status: 503,
        error: 'HTTP 503',
        latency_ms: 2,
        outcome: 'retry',
      },
      status: 'pending',
      next_attempt_at: retryAt,
    },
    queue,
  );
  // A queue entry of a past turn finds nothing to do.
  assert.equal(await book.lease(last.id, 1, new Date(), 1000), { skip: true });
  const events = await book.events(w.id, 500);
  const attempts = await book.attempts(w.id, 500);
  assert.ok(events.length >= 100 && events.length <= 101, `${events.length} events kept`);
  assert.is(attempts.length, 200);
  await book.close();
  // 1,803 lines were written; compactions kept the file near the state's size.
  assert.ok(most < 1300, `the journal grew to ${most} lines`);
  assert.ok(lines(book.file) < 1000, `${lines(book.file)} lines at the end`);
  const again = new FileOutboxStore(dir, undefined, 50);
  assert.equal(await again.open(), [{ entry: `${last.id}:2`, at: retryAt }]);
  assert.equal(await again.events(w.id, 500), events);
  assert.equal(await again.attempts(w.id, 500), attempts);
  assert.ok('entry' in (await again.lease(last.id, 2, new Date(), 1000)));
  await again.close();
  await queue.close();
});

test.run();
