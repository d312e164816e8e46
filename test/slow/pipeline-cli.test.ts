// The pipeline CLI and schedule as a user runs them: real child processes, exit codes, logs.
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { loadConfig } from '../../core/infra/config.ts';
import { dataDirLayout } from '../../core/infra/data-dir.ts';
import { readCurrent } from '../../core/snapshots/generations.ts';
import { acquireLock, LockHeld } from '../../core/infra/lock.ts';
import { pollUntil } from '../../core/infra/wait-at-most.ts';
import { runTs, spawnTs } from '../helpers/child.ts';
import { cleanupTmp, tmpDir, writeLines } from '../helpers/tmp.ts';

test.after.each(cleanupTmp);

test('--help lists every command; bad arguments fail with one line and exit 2', async () => {
  const help = await runTs('pipeline/run/cli.ts', ['--help']);
  assert.is(help.code, 0);
  for (const c of ['run', 'ingest', 'features', 'index', 'narratives', 'patterns', 'publish', 'schedule', '--data-dir', '--as-of'])
    assert.ok(help.out.includes(c), c);
  const badDate = await runTs('pipeline/run/cli.ts', ['run', '--as-of', 'yesterday-ish']);
  assert.is(badDate.code, 2);
  assert.match(badDate.out, /--as-of "yesterday-ish" is not an ISO 8601/);
  const badStage = await runTs('pipeline/run/cli.ts', ['frobnicate']);
  assert.is(badStage.code, 2);
  assert.match(badStage.out, /unknown stage "frobnicate"/);
});

test('a run logs JSON lines with per-stage timings and exits 0', async () => {
  const d = tmpDir();
  writeLines(path.join(d, 'landing', 'a.ndjson'), [{ uuid: 'a', platform: 'x', published_at: '2026-10-01T00:00:00Z' }]);
  const r = await runTs('pipeline/run/cli.ts', ['run', '--data-dir', d, '--as-of', '2026-11-01T00:00:00Z']);
  assert.is(r.code, 0, r.out);
  const lines = r.out
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l));
  const finished = lines.filter((l) => l.msg === 'stage finished');
  assert.equal(
    finished.map((l) => l.stage),
    ['ingest', 'features', 'index', 'narratives', 'patterns', 'publish'],
  );
  for (const l of finished) assert.type(l.ms, 'number');
  assert.is(await readCurrent(dataDirLayout(d)), 'g000001');
});

test('an --as-of older than the served generation is refused with what it would do; --allow-rewind publishes it', async () => {
  const d = tmpDir();
  writeLines(path.join(d, 'landing', 'a.ndjson'), [
    { uuid: 'old', platform: 'x', published_at: '2026-10-01T00:00:00Z', title: 'an older post' },
    { uuid: 'new', platform: 'x', published_at: '2026-10-25T00:00:00Z', title: 'a newer post' },
  ]);
  assert.is((await runTs('pipeline/run/cli.ts', ['run', '--data-dir', d, '--as-of', '2026-11-01T00:00:00Z'])).code, 0);
  const back = await runTs('pipeline/run/cli.ts', ['run', '--data-dir', d, '--as-of', '2026-10-20T00:00:00Z']);
  assert.is(back.code, 2, back.out);
  assert.match(
    back.out,
    new RegExp(
      '--as-of 2026-10-20T00:00:00.000Z is older than the served generation g000001 \\(as of 2026-11-01T00:00:00.000Z\\): ' +
        'the run would publish the posts published by then \\(1 posts, against 2 in g000001\\)',
    ),
  );
  assert.match(back.out, /--allow-rewind/);
  assert.is(await readCurrent(dataDirLayout(d)), 'g000001', 'nothing published');
  const forced = await runTs('pipeline/run/cli.ts', ['run', '--data-dir', d, '--as-of', '2026-10-20T00:00:00Z', '--allow-rewind']);
  assert.is(forced.code, 0, forced.out);
  assert.is(await readCurrent(dataDirLayout(d)), 'g000002');
  // Forward again needs nothing special.
  assert.is((await runTs('pipeline/run/cli.ts', ['run', '--data-dir', d, '--as-of', '2026-11-02T00:00:00Z'])).code, 0);
});

test('a data directory with nothing in it is refused (a mistyped --data-dir), created nowhere; --init starts one on purpose', async () => {
  const typo = path.join(tmpDir(), 'typo');
  for (const command of ['run', 'ingest', 'schedule']) {
    const r = await runTs('pipeline/run/cli.ts', [command, '--data-dir', typo]);
    assert.is(r.code, 2, r.out);
    assert.match(
      r.out,
      /^pipeline: \S+typo is not a data directory yet: no generation published and no file in \S+landing; check --data-dir/m,
    );
    assert.not.ok(fs.existsSync(typo), `${command} created the folder`);
  }
  // An empty landing folder is nothing landed too.
  fs.mkdirSync(path.join(typo, 'landing', 'sub'), { recursive: true });
  assert.is((await runTs('pipeline/run/cli.ts', ['run', '--data-dir', typo])).code, 2);
  const init = await runTs('pipeline/run/cli.ts', ['run', '--data-dir', typo, '--init']);
  assert.is(init.code, 0, init.out);
  assert.is(await readCurrent(dataDirLayout(typo)), 'g000001');
  // Once a generation is published, an empty landing folder is an ordinary run.
  assert.is((await runTs('pipeline/run/cli.ts', ['run', '--data-dir', typo])).code, 0);
});

test("a run fails with a one-line reason while another run holds the lock; a dead owner's lock is taken over", async () => {
  const d = tmpDir();
  writeLines(path.join(d, 'landing', 'a.ndjson'), [{ uuid: 'a', platform: 'x', published_at: '2026-10-01T00:00:00Z' }]);
  const layout = dataDirLayout(d);
  const held = await acquireLock(layout.lock);
  try {
    await acquireLock(layout.lock);
    assert.unreachable('second acquire must fail');
  } catch (err) {
    assert.instance(err, LockHeld);
  }
  const r = await runTs('pipeline/run/cli.ts', ['run', '--data-dir', d]);
  assert.is(r.code, 1);
  assert.match(r.out, /pipeline: another pipeline run holds the lock \(pid \d+/);
  await held.release();
  // A lock left by a process that no longer exists is stale.
  fs.writeFileSync(layout.lock, JSON.stringify({ pid: 2 ** 22 + 12345, since: 'long ago' }));
  const ok = await runTs('pipeline/run/cli.ts', ['run', '--data-dir', d]);
  assert.is(ok.code, 0, ok.out);
});

test('configuration errors name the variable', () => {
  assert.throws(() => loadConfig({ PORT: 'eighty' }), /PORT/);
  assert.throws(() => loadConfig({ PIPELINE_SCHEDULE: 'hourly' }), /PIPELINE_SCHEDULE: must be a JSON object/);
  assert.throws(() => loadConfig({ SERVICE_PREFIX: 'api/' }), /SERVICE_PREFIX/);
  assert.is(loadConfig({}).PORT, 8080);
});

test('schedule: runs on its cron expression, rejects bad expressions, stops on SIGTERM', async () => {
  const bad = await runTs('pipeline/run/cli.ts', ['schedule'], { PIPELINE_SCHEDULE: '{"run":"every minute"}' });
  assert.is(bad.code, 2);
  assert.match(bad.out, /not a valid cron expression/);
  const unknown = await runTs('pipeline/run/cli.ts', ['schedule'], { PIPELINE_SCHEDULE: '{"nope":"* * * * *"}' });
  assert.is(unknown.code, 2);

  const d = tmpDir();
  writeLines(path.join(d, 'landing', 'a.ndjson'), [{ uuid: 'a', platform: 'x', published_at: '2020-10-01T00:00:00Z' }]);
  // Every second (node-cron's optional seconds field), so the test needs no long wait.
  const child = spawnTs('pipeline/run/cli.ts', ['schedule', '--data-dir', d], { PIPELINE_SCHEDULE: '{"run":"* * * * * *"}' });
  await pollUntil('a scheduled run', () => /scheduled run finished/.test(child.out()), 60_000);
  assert.ok(await readCurrent(dataDirLayout(d)));
  child.proc.kill('SIGTERM');
  const { code } = await child.exited;
  assert.is(code, 143, child.out());
  assert.not.ok(fs.existsSync(dataDirLayout(d).lock), 'lock released on stop');
});

test.run();
