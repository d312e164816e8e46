// Generations: manifest truth, retention, and atomic publish under SIGKILL and SIGTERM at every
// failpoint of the write path, with real child processes.
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { dataDirLayout } from '../../core/infra/data-dir.ts';
import { openDuckDB, sqlString } from '../../core/infra/duckdb.ts';
import { sha256File } from '../../core/infra/durable-fs.ts';
import { generationDir, listGenerations, readCurrent, readManifest } from '../../core/snapshots/generations.ts';
import { pollUntil } from '../../core/infra/wait-at-most.ts';
import { spawnTs } from '../helpers/child.ts';
import { AS_OF, readSnapshot, runPipeline, summaryOf } from '../helpers/pipeline.ts';
import { cleanupTmp, tmpDir, writeLines } from '../helpers/tmp.ts';

const posts = (prefix: string, n: number, day = 10) =>
  Array.from({ length: n }, (_, i) => ({
    uuid: `${prefix}-${i}`,
    platform: i % 2 ? 'x' : 'reddit',
    creator_id: i % 5,
    published_at: `2026-10-${String(day).padStart(2, '0')}T00:00:00Z`,
    like_count: i,
  }));

async function verifyGeneration(dataDir: string, gen: string): Promise<void> {
  const layout = dataDirLayout(dataDir);
  const m = await readManifest(layout, gen);
  assert.is(m.generation, gen);
  const db = await openDuckDB();
  try {
    for (const f of m.files) {
      const p = path.join(generationDir(layout, gen), f.name);
      assert.is(await sha256File(p), f.sha256, `${gen}/${f.name} checksum`);
      assert.is(fs.statSync(p).size, f.bytes);
      if (f.rows !== null) {
        const [r] = await db.all(`SELECT count(*)::INT AS n FROM read_parquet(${sqlString(p)})`);
        assert.is(r!.n, f.rows, `${gen}/${f.name} rows`);
      }
    }
  } finally {
    db.close();
  }
}

test.after.each(cleanupTmp);

test('publish writes a verifiable manifest with windows and switches CURRENT', async () => {
  const d = tmpDir();
  writeLines(path.join(d, 'landing', 'a.ndjson'), posts('a', 20));
  const run = await runPipeline(d);
  const s = summaryOf(run, 'publish');
  const layout = dataDirLayout(d);
  assert.is(await readCurrent(layout), 'g000001');
  assert.is(s.generation, 'g000001');
  const m = await readManifest(layout, 'g000001');
  assert.is(m.schema_version, 2);
  assert.is(m.as_of, AS_OF.toISOString());
  assert.is(m.windows['7d'].start, '2026-10-25T00:00:00.000Z');
  assert.is(m.windows['30d'].start, '2026-10-02T00:00:00.000Z');
  assert.is(m.windows.all.start, '2026-10-10T00:00:00.000Z');
  assert.is(m.windows.all.end, AS_OF.toISOString());
  const seg = m.segments![0]!.id;
  assert.equal(m.files.map((f) => f.name).sort(), [
    'creators.parquet',
    'deleted-rows.u32',
    'embedder.bin',
    'narrative-centroids.f32',
    'narrative-member-terms.bin',
    'narrative-members.parquet',
    'narrative-text.bin',
    'narrative-trajectory.parquet',
    'narratives-source.json',
    'narratives.parquet',
    'pattern-centroids.f32',
    'pattern-lookalikes.parquet',
    'pattern-members.parquet',
    'pattern-representatives.parquet',
    'pattern-trajectory.parquet',
    'patterns-source.json',
    'patterns.parquet',
    'posts.parquet',
    ...[
      'bm25.bin',
      'doc-terms.bin',
      'enrichment.parquet',
      'label-words.bin',
      'neighbour-scores.parquet',
      'text-vectors.f32',
      'text.hnsw',
      'uuids.txt',
      'visual-elements.parquet',
      'visual-vectors.f32',
      'visual.hnsw',
    ].map((f) => `segments/${seg}/${f}`),
    'source.json',
    'text-space.json',
    'themes.parquet',
    'visual-space.json',
  ]);
  assert.equal(
    m.segments!.map((x) => [x.rows, x.to, x.builtIn]),
    [[20, null, 'g000001']],
  );
  assert.equal(m.run, { mode: 'full', full_because: 'no generation published yet', built: [seg], reused: [] });
  assert.equal(m.embedder!.fitted_rows, 20);
  assert.equal(m.counts, { posts: 20, creators: 10, rows: 20, masked: 0 });
  await verifyGeneration(d, 'g000001');
  // Snapshot tables are plain Parquet with the documented columns.
  const [row] = await readSnapshot(d, 'posts', '*', "WHERE uuid = 'a-3'");
  assert.equal(Object.keys(row!), [
    'row_id',
    'uuid',
    'platform',
    'content_type',
    'creator_id',
    'creator_handle',
    'follower_count',
    'title',
    'description',
    'tags',
    'published_at',
    'observed_at',
    'like_count',
    'comment_count',
    'share_count',
    'view_count',
    'content_url',
    'media',
    'language',
  ]);
  const creators = await readSnapshot(d, 'creators', 'creator_id::INT AS id, platform, post_count::INT AS n', 'ORDER BY id, platform');
  assert.is(creators.length, 10);
  assert.is(
    creators.reduce((a, c) => a + (c.n as number), 0),
    20,
  );
});

test('old generations are pruned to KEEP_GENERATIONS; the current one is never removed', async () => {
  const d = tmpDir();
  for (let i = 1; i <= 4; i++) {
    writeLines(path.join(d, 'landing', `f${i}.ndjson`), posts(`r${i}`, 3));
    await runPipeline(d, ['run'], AS_OF, { KEEP_GENERATIONS: '2' });
  }
  const layout = dataDirLayout(d);
  assert.equal(await listGenerations(layout), ['g000003', 'g000004']);
  assert.is(await readCurrent(layout), 'g000004');
  assert.is((await readSnapshot(d, 'posts', 'uuid')).length, 12);
});

const FAILPOINTS = ['ingest.before-commit', 'publish.after-tables', 'publish.before-rename', 'publish.before-current-switch'];

for (const fp of FAILPOINTS) {
  test(`kill -9 at ${fp} leaves the previous generation served and the next run whole`, async () => {
    const d = tmpDir();
    const layout = dataDirLayout(d);
    writeLines(path.join(d, 'landing', '1.ndjson'), posts('one', 50));
    await runPipeline(d);
    assert.is(await readCurrent(layout), 'g000001');

    writeLines(path.join(d, 'landing', '2.ndjson'), posts('two', 30, 20));
    const fpDir = tmpDir('fp-');
    const child = spawnTs('pipeline/run/cli.ts', ['run', '--data-dir', d, '--as-of', AS_OF.toISOString()], {
      FAILPOINTS: fp,
      FAILPOINT_DIR: fpDir,
      LOG_LEVEL: 'silent',
    });
    await pollUntil(`failpoint ${fp}`, () => fs.existsSync(path.join(fpDir, fp)), 60_000);
    child.proc.kill('SIGKILL');
    const { signal } = await child.exited;
    assert.is(signal, 'SIGKILL');

    // Readers still see generation 1, whole and valid.
    assert.is(await readCurrent(layout), 'g000001');
    await verifyGeneration(d, 'g000001');
    assert.is((await readSnapshot(d, 'posts', 'uuid')).length, 50);

    // The next run takes the stale lock over, sweeps leftovers and publishes everything once.
    const run = await runPipeline(d);
    const ingest = summaryOf(run, 'ingest');
    assert.is(ingest.posts, 80);
    const gen = await readCurrent(layout);
    assert.ok(gen && gen > 'g000001', `new generation published (${gen})`);
    await verifyGeneration(d, gen!);
    assert.is((await readSnapshot(d, 'posts', 'uuid')).length, 80);
    assert.equal(
      fs.readdirSync(layout.snapshots).filter((n) => n.startsWith('.tmp-')),
      [],
    );
  });
}

test('SIGTERM abandons the current stage cleanly: exit 143, lock released, previous generation served', async () => {
  const d = tmpDir();
  const layout = dataDirLayout(d);
  writeLines(path.join(d, 'landing', '1.ndjson'), posts('one', 10));
  await runPipeline(d);
  writeLines(path.join(d, 'landing', '2.ndjson'), posts('two', 10));
  const fpDir = tmpDir('fp-');
  const child = spawnTs('pipeline/run/cli.ts', ['run', '--data-dir', d, '--as-of', AS_OF.toISOString()], {
    FAILPOINTS: 'publish.after-tables',
    FAILPOINT_DIR: fpDir,
  });
  await pollUntil('publish to start', () => fs.existsSync(path.join(fpDir, 'publish.after-tables')), 60_000);
  child.proc.kill('SIGTERM');
  const { code } = await child.exited;
  assert.is(code, 143, child.out());
  assert.match(child.out(), /abandoned/);
  assert.not.ok(fs.existsSync(layout.lock), 'lock released');
  assert.is(await readCurrent(layout), 'g000001');
  const run = await runPipeline(d);
  assert.is(summaryOf(run, 'publish').generation, 'g000002');
  assert.is((await readSnapshot(d, 'posts', 'uuid')).length, 20);
});

test.run();
