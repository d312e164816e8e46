// Incremental ingest: files identified by checksum, idempotent re-runs, and count upserts that
// keep the latest observation.
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readSnapshot, runPipeline, summaryOf } from '../helpers/pipeline.ts';
import { cleanupTmp, tmpDir, writeLines } from '../helpers/tmp.ts';

const post = (uuid: string, likes: number, observed?: string, extra: Record<string, unknown> = {}) => ({
  uuid,
  platform: 'x',
  published_at: '2026-10-01T00:00:00Z',
  like_count: likes,
  view_count: likes * 10,
  ...(observed ? { observed_at: observed } : {}),
  ...extra,
});

test.after.each(cleanupTmp);

test('a file is never ingested twice, even renamed or copied', async () => {
  const d = tmpDir();
  const f = path.join(d, 'landing', 'a.ndjson');
  writeLines(f, [post('a', 1), post('b', 2)]);
  const first = summaryOf(await runPipeline(d, ['ingest']), 'ingest');
  assert.equal([first.files, first.accepted, first.posts], [1, 2, 2]);

  const again = summaryOf(await runPipeline(d, ['ingest']), 'ingest');
  assert.equal([again.files, again.skippedFiles, again.read, again.posts], [0, 1, 0, 2]);

  fs.copyFileSync(f, path.join(d, 'landing', 'copy-of-a.ndjson'));
  fs.renameSync(f, path.join(d, 'landing', 'renamed.ndjson'));
  const renamed = summaryOf(await runPipeline(d, ['ingest']), 'ingest');
  assert.equal([renamed.files, renamed.skippedFiles, renamed.posts], [0, 2, 2]);
});

test('a landing file unchanged since it was hashed (path, size, mtime) is not read again; a changed one is', async () => {
  const d = tmpDir();
  const f = path.join(d, 'landing', 'a.ndjson');
  writeLines(f, [post('a', 1), post('b', 2)]);
  const hourAgo = new Date(Date.now() - 3_600_000);
  fs.utimesSync(f, hourAgo, hourAgo);
  assert.is(summaryOf(await runPipeline(d, ['ingest']), 'ingest').accepted, 2);
  // Other bytes of the same size under the same mtime: taken for the file already hashed, so not read
  // (the stat check git's index makes; a writer that keeps size and mtime defeats it, as it does git).
  const same = fs.readFileSync(f, 'utf8').replace('"uuid":"a"', '"uuid":"z"');
  fs.writeFileSync(f, same);
  fs.utimesSync(f, hourAgo, hourAgo);
  const cached = summaryOf(await runPipeline(d, ['ingest']), 'ingest');
  assert.equal([cached.files, cached.skippedFiles, cached.read, cached.posts], [0, 1, 0, 2]);
  // A new mtime: hashed again, its new bytes are a new file, ingested.
  fs.utimesSync(f, new Date(), new Date());
  const changed = summaryOf(await runPipeline(d, ['ingest']), 'ingest');
  assert.equal([changed.files, changed.accepted, changed.posts], [1, 1, 3]);
});

test('files of one run with and without a uuid repeated inside them, in either order, are all ingested', async () => {
  for (const order of [
    ['1-plain', '2-repeats'],
    ['1-repeats', '2-plain'],
  ]) {
    const d = tmpDir();
    const plain = [post('p1', 1), post('p2', 2)];
    const repeats = [post('r1', 1, '2026-10-02T00:00:00Z'), post('r1', 7, '2026-10-03T00:00:00Z'), post('r2', 3)];
    for (const name of order) writeLines(path.join(d, 'landing', `${name}.ndjson`), name.endsWith('plain') ? plain : repeats);
    const s = summaryOf(await runPipeline(d, ['ingest']), 'ingest');
    assert.equal([s.files, s.posts], [2, 4], order.join(' then '));
  }
});

test('later observations update counts; older ones do not; content stays as first seen', async () => {
  const d = tmpDir();
  writeLines(path.join(d, 'landing', '1.ndjson'), [
    post('a', 10, '2026-10-02T00:00:00Z', { title: 'first title', follower_count: 100 }),
    post('b', 5, '2026-10-02T00:00:00Z'),
  ]);
  await runPipeline(d, ['ingest']);
  writeLines(path.join(d, 'landing', '2.ndjson'), [
    post('a', 50, '2026-10-05T00:00:00Z', { title: 'edited title', follower_count: 150 }),
    post('b', 1, '2026-10-01T12:00:00Z'), // older than what we have: ignored
    post('c', 7, '2026-10-03T00:00:00Z'),
    post('c', 9, '2026-10-04T00:00:00Z'), // same file, later observation wins
    post('c', 8, '2026-10-03T12:00:00Z'),
  ]);
  const s = summaryOf(await runPipeline(d), 'ingest');
  assert.equal([s.read, s.accepted, s.updated, s.quarantined], [5, 1, 4, 0]);
  assert.is(s.read as number, (s.accepted as number) + (s.updated as number) + (s.quarantined as number));
  const rows = await readSnapshot(
    d,
    'posts',
    `uuid, like_count::INT AS likes, view_count::INT AS views, follower_count::INT AS followers, title,
    strftime(observed_at, '%Y-%m-%d') AS observed`,
    'ORDER BY uuid',
  );
  assert.equal(rows, [
    { uuid: 'a', likes: 50, views: 500, followers: 150, title: 'first title', observed: '2026-10-05' },
    { uuid: 'b', likes: 5, views: 50, followers: null, title: null, observed: '2026-10-02' },
    { uuid: 'c', likes: 9, views: 90, followers: null, title: null, observed: '2026-10-04' },
  ]);
});

test('only new files are read on later runs, and every run accounts for every record', async () => {
  const d = tmpDir();
  for (let i = 0; i < 3; i++) {
    writeLines(path.join(d, 'landing', `day-${i}.ndjson`), [
      post(`p${i}-1`, i),
      post(`p${i}-2`, i),
      { uuid: `bad-${i}`, platform: 'x', published_at: 'never' },
    ]);
    const s = summaryOf(await runPipeline(d, ['ingest']), 'ingest');
    assert.equal([s.files, s.read, s.accepted, s.updated, s.quarantined, s.posts], [1, 3, 2, 0, 1, 2 * (i + 1)]);
  }
});

test('posts published after as-of wait for a later snapshot', async () => {
  const d = tmpDir();
  writeLines(path.join(d, 'landing', 'a.ndjson'), [post('old', 1), { ...post('future', 1), published_at: '2026-12-01T00:00:00Z' }]);
  await runPipeline(d, ['run'], new Date('2026-11-01T00:00:00Z'));
  assert.equal(
    (await readSnapshot(d, 'posts', 'uuid')).map((r) => r.uuid),
    ['old'],
  );
  await runPipeline(d, ['run'], new Date('2026-12-02T00:00:00Z'));
  assert.equal(
    (await readSnapshot(d, 'posts', 'uuid', 'ORDER BY uuid')).map((r) => r.uuid),
    ['future', 'old'],
  );
});

test('deletions, in NDJSON and CSV, are final: the post goes, later records of its uuid are refused, every record is accounted for', async () => {
  const d = tmpDir();
  writeLines(path.join(d, 'landing', '1.ndjson'), [post('a', 1), post('b', 2), post('c', 3), post('d', 4)]);
  await runPipeline(d, ['ingest']);
  writeLines(path.join(d, 'landing', '2.ndjson'), [
    { uuid: 'a', deleted: true },
    { uuid: 'a', deleted: true, observed_at: '2026-10-09T00:00:00Z' },
    post('a', 99, '2026-10-10T00:00:00Z'),
    { uuid: 'ghost', deleted: true },
    { uuid: 'b', deleted: 'yes' },
    { uuid: 'c', deleted: false, like_count: 30, platform: 'x', published_at: '2026-10-01T00:00:00Z', observed_at: '2099-01-01T00:00:00Z' },
    { deleted: true },
  ]);
  const s = summaryOf(await runPipeline(d, ['ingest']), 'ingest');
  assert.equal([s.read, s.accepted, s.updated, s.deletions, s.deleted, s.ofDeleted, s.quarantined], [7, 0, 1, 3, 1, 1, 2]);
  assert.is(s.read, Number(s.accepted) + Number(s.updated) + Number(s.deletions) + Number(s.ofDeleted) + Number(s.quarantined));
  const q = fs.readFileSync(path.join(d, 'quarantine', fs.readdirSync(path.join(d, 'quarantine'))[0]!), 'utf8');
  assert.match(q, /deleted must be true \(a deletion\) or false/);
  assert.match(q, /missing uuid/);
  // CSV: a deleted column holding true.
  fs.writeFileSync(
    path.join(d, 'landing', '3.csv'),
    'uuid,platform,published_at,deleted\nd,x,2026-10-01T00:00:00Z,true\nghost,x,2026-10-01T00:00:00Z,\ne,x,2026-10-01T00:00:00Z,false\n',
  );
  const c = summaryOf(await runPipeline(d, ['ingest']), 'ingest');
  assert.equal([c.read, c.accepted, c.deletions, c.deleted, c.ofDeleted], [3, 1, 1, 1, 1]);
  await runPipeline(d, ['run']);
  const uuids = (await readSnapshot(d, 'posts', 'uuid', 'ORDER BY uuid')).map((r) => r.uuid);
  assert.equal(uuids, ['b', 'c', 'e']);
  assert.is(Number((await readSnapshot(d, 'posts', 'like_count', `WHERE uuid = 'c'`))[0]!.like_count), 30);
});

test.run();
