// Zero records lost, on generated corpora with ground truth: every valid post is in the snapshot
// with the counts of its latest observation, and every bad record is in quarantine at exactly the
// file and record number the truth names. NDJSON (the committed sample, with media), CSV, Parquet.
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { generateCorpus } from '../../fixtures/generate.ts';
import { ROOT } from '../helpers/child.ts';
import { AS_OF, readSnapshot, runPipeline, summaryOf } from '../helpers/pipeline.ts';
import { cleanupTmp, tmpDir } from '../helpers/tmp.ts';

interface Truth {
  posts: Set<string>;
  bad: Array<{ file: string; record: number; reason: string }>;
  reobservations: number;
}

function readTruth(file: string): Truth {
  const t: Truth = { posts: new Set(), bad: [], reobservations: 0 };
  for (const line of fs.readFileSync(file, 'utf8').split('\n')) {
    if (!line) continue;
    const r = JSON.parse(line);
    if (r.type === 'post') t.posts.add(r.uuid);
    else if (r.type === 'bad') t.bad.push({ file: path.basename(r.file), record: r.record, reason: r.reason });
    else if (r.type === 'reobservation') t.reobservations++;
  }
  return t;
}

function readQuarantine(dataDir: string): Array<{ file: string; record: number | null; reasons: string[] }> {
  const dir = path.join(dataDir, 'quarantine');
  if (!fs.existsSync(dir)) return [];
  return fs.readdirSync(dir).flatMap((f) =>
    fs
      .readFileSync(path.join(dir, f), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l))
      .map((q) => ({ file: path.basename(q.source_file), record: q.record, reasons: q.reasons })),
  );
}

/** The counts each uuid must end with: those of its latest observation (ties: the later record). */
function expectedLikes(dir: string): Map<string, number> {
  const best = new Map<string, { obs: string; likes: number }>();
  for (const f of fs
    .readdirSync(dir)
    .filter((x) => x.endsWith('.ndjson'))
    .sort()) {
    for (const line of fs.readFileSync(path.join(dir, f), 'utf8').split('\n')) {
      let r;
      try {
        r = JSON.parse(line);
      } catch {
        continue;
      }
      if (typeof r?.uuid !== 'string' || typeof r.like_count !== 'number' || typeof r.observed_at !== 'string') continue;
      const cur = best.get(r.uuid);
      if (!cur || Date.parse(r.observed_at) >= Date.parse(cur.obs)) best.set(r.uuid, { obs: r.observed_at, likes: r.like_count });
    }
  }
  return new Map([...best].map(([k, v]) => [k, v.likes]));
}

async function checkCorpus(dataDir: string, truth: Truth, expectLikes?: Map<string, number>): Promise<void> {
  const run = await runPipeline(dataDir, ['run'], AS_OF);
  const s = summaryOf(run, 'ingest') as { read: number; accepted: number; updated: number; quarantined: number };
  assert.is(s.read, s.accepted + s.updated + s.quarantined, 'read = accepted + updated + quarantined');
  assert.is(s.accepted, truth.posts.size, 'one accepted record per valid post');
  assert.is(s.quarantined, truth.bad.length, 'one quarantined record per planted bad record');
  assert.ok(truth.bad.length > 0 && truth.reobservations > 0, 'the corpus exercises quarantine and upserts');

  const uuids = new Set((await readSnapshot(dataDir, 'posts', 'uuid')).map((r) => r.uuid as string));
  assert.is(uuids.size, truth.posts.size);
  for (const u of truth.posts) assert.ok(uuids.has(u), `post ${u} in the snapshot`);

  const q = readQuarantine(dataDir);
  const key = (f: string, r: number | null) => `${f}#${r}`;
  assert.equal(new Set(q.map((x) => key(x.file, x.record))), new Set(truth.bad.map((b) => key(b.file, b.record))));
  for (const x of q) assert.ok(x.reasons.length > 0 && x.reasons.every((r) => r.length > 5), 'every rejection has a reason');

  if (expectLikes) {
    const rows = await readSnapshot(dataDir, 'posts', 'uuid, like_count::BIGINT AS likes');
    let checked = 0;
    for (const r of rows) {
      const want = expectLikes.get(r.uuid as string);
      if (want === undefined) continue;
      assert.is(Number(r.likes), want, `likes of ${r.uuid} are those of its latest observation`);
      checked++;
    }
    assert.is(checked, rows.length);
  }
}

test.after.each(cleanupTmp);

test('committed NDJSON sample with media: nothing lost, bad records exactly where the truth says', async () => {
  const sample = path.join(ROOT, 'fixtures', 'sample');
  const d = tmpDir();
  fs.cpSync(path.join(sample, 'posts'), path.join(d, 'landing', 'sample'), { recursive: true });
  await checkCorpus(d, readTruth(path.join(sample, 'truth.ndjson')), expectedLikes(path.join(sample, 'posts')));
  // Media references resolve to real files under DATA_DIR.
  const media = await readSnapshot(d, 'posts', 'unnest(media).path AS p');
  assert.ok(media.length > 50);
  for (const m of media) assert.ok(fs.existsSync(path.join(d, m.p as string)), `${m.p} exists`);
});

for (const format of ['csv', 'parquet'] as const) {
  test(`generated ${format} corpus: nothing lost, bad records exactly where the truth says`, async () => {
    const d = tmpDir();
    const out = path.join(d, 'landing', 'gen');
    const truthFile = path.join(d, 'gen.truth.ndjson');
    await generateCorpus({ posts: 1500, outDir: out, truthFile, seed: 11, asOf: AS_OF, media: false, format, badShare: 0.02 });
    await checkCorpus(d, readTruth(truthFile));
  });
}

test.run();
