// Ingest validation and normalisation edge cases, through the real stage, a real DuckDB work
// store and real files; results read back from the published Parquet snapshot and quarantine.
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { openDuckDB, sqlString } from '../../core/infra/duckdb.ts';
import { parseCsvLine } from '../../pipeline/ingest/read-records.ts';
import { readSnapshot, runPipeline, summaryOf } from '../helpers/pipeline.ts';
import { cleanupTmp, tmpDir, writeLines } from '../helpers/tmp.ts';

const ok = { platform: 'x', published_at: '2026-10-01T10:00:00Z' };

function quarantined(dataDir: string): Array<{ source_file: string; record: number | null; reasons: string[]; original: string | null }> {
  const dir = path.join(dataDir, 'quarantine');
  if (!fs.existsSync(dir)) return [];
  return fs.readdirSync(dir).flatMap((f) =>
    fs
      .readFileSync(path.join(dir, f), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l)),
  );
}

function reasonsOf(dataDir: string, record: number): string[] {
  return quarantined(dataDir).find((q) => q.record === record)?.reasons ?? [];
}

test.after.each(cleanupTmp);

test('each kind of bad record is quarantined with a reason naming the problem', async () => {
  const d = tmpDir();
  const bad: Array<[unknown, RegExp]> = [
    [{ ...ok }, /missing uuid/],
    [{ ...ok, uuid: '' }, /uuid is empty/],
    [{ ...ok, uuid: 42 }, /uuid must be a string/],
    [{ ...ok, uuid: 'a', published_at: 'not-a-date' }, /published_at is not a valid ISO 8601/],
    [{ ...ok, uuid: 'b', published_at: '2026-13-45T99:00:00Z' }, /published_at is not a valid/],
    [{ ...ok, uuid: 'c', published_at: undefined }, /missing published_at/],
    [{ ...ok, uuid: 'd', published_at: 1700000000 }, /published_at is not a valid ISO 8601 date-time: 1700000000/],
    [{ ...ok, uuid: 'e', like_count: 'lots' }, /like_count must be a number/],
    [{ ...ok, uuid: 'f', view_count: -3 }, /view_count must be a non-negative number/],
    [{ ...ok, uuid: 'g', tags: 42 }, /tags must be a list of strings/],
    [{ ...ok, uuid: 'h', tags: ['ok', 7] }, /tags must be a list of strings/],
    [{ ...ok, uuid: 'i', creator_id: 'abc' }, /creator_id must be a number/],
    [{ ...ok, uuid: 'j', creator_id: 1.5 }, /creator_id must be an integer/],
    [{ ...ok, uuid: 'k', title: 12345 }, /title must be a string/],
    [{ ...ok, uuid: 'l', platform: undefined }, /missing platform/],
    [{ ...ok, uuid: 'm', platform: 'no spaces allowed' }, /platform must be a short name/],
    [{ ...ok, uuid: 'n', content_type: 'hologram' }, /content_type must be one of/],
    [{ ...ok, uuid: 'o', media: [{ kind: 'image', path: 'missing.jpg' }] }, /media file not found: landing\/missing.jpg/],
    [{ ...ok, uuid: 'p', media: [{ kind: 'image', path: '../../etc/passwd' }] }, /relative path \(no \.\.\)/],
    [{ ...ok, uuid: 'q', media: [{ kind: 'audio', path: 'a.jpg' }] }, /kind image\|video/],
    [{ ...ok, uuid: 'r', media: 'a.jpg' }, /media must be a list/],
    [{ ...ok, uuid: 's', text_embedding: [1, 'x'] }, /text_embedding must be a list of numbers/],
    [{ ...ok, uuid: 't', follower_count: 'NaN' }, /follower_count must be a non-negative number/],
    [{ ...ok, uuid: 'u', observed_at: 'yesterday' }, /observed_at is not a valid/],
    ['{"uuid": "v", broken', /malformed JSON/],
    ['[1, 2, 3]', /record is not a JSON object/],
  ];
  writeLines(
    path.join(d, 'landing', 'bad.ndjson'),
    bad.map(([r]) => r),
  );
  const run = await runPipeline(d);
  const s = summaryOf(run, 'ingest');
  assert.is(s.read, bad.length);
  assert.is(s.quarantined, bad.length);
  assert.is(s.accepted, 0);
  bad.forEach(([, re], i) => {
    const reasons = reasonsOf(d, i + 1);
    assert.ok(
      reasons.some((r) => re.test(r)),
      `record ${i + 1}: expected ${re} in ${JSON.stringify(reasons)}`,
    );
  });
  // The original record travels with its reasons, byte for byte.
  const q = quarantined(d).find((x) => x.record === 25)!;
  assert.is(q.original, '{"uuid": "v", broken');
  assert.is((await readSnapshot(d, 'posts')).length, 0);
});

test('a record with several problems lists all of them', async () => {
  const d = tmpDir();
  writeLines(path.join(d, 'landing', 'x.ndjson'), [{ uuid: 'a', platform: 'x', published_at: 'nope', like_count: 'many', tags: 5 }]);
  await runPipeline(d);
  const reasons = reasonsOf(d, 1);
  assert.is(reasons.length, 3, JSON.stringify(reasons));
});

test('normalisation: platform, tags, timestamps to UTC, counts, content type, media paths', async () => {
  const d = tmpDir();
  fs.mkdirSync(path.join(d, 'landing', 'batch', 'media'), { recursive: true });
  fs.writeFileSync(path.join(d, 'landing', 'batch', 'media', 'a.jpg'), 'jpeg bytes');
  fs.writeFileSync(path.join(d, 'landing', 'batch', 'media', 'f1.jpg'), 'frame');
  writeLines(path.join(d, 'landing', 'batch', 'p.ndjson'), [
    {
      uuid: ' n1 ',
      platform: ' TikTok ',
      published_at: '2026-10-01T12:00:00+02:00',
      tags: ['#Foo', 'BAR', 'foo', '  ', '##baz'],
      like_count: 12.9,
      view_count: '100',
      creator_id: '77',
      follower_count: 5,
      media: [{ kind: 'image', path: './media/a.jpg' }],
    },
    {
      uuid: 'n2',
      platform: 'youtube',
      published_at: '2026-10-02T00:00:00',
      tags: 'a|#B, c;d',
      media: [{ kind: 'VIDEO', path: 'media/a.jpg', frames: ['media/f1.jpg'] }],
    },
    {
      uuid: 'n3',
      platform: 'instagram',
      published_at: '2026-10-03',
      media: [
        { kind: 'image', path: 'media/a.jpg' },
        { kind: 'image', url: 'https://cdn.example/x.jpg' },
      ],
    },
    {
      uuid: 'n4',
      platform: 'x',
      published_at: '2026-10-04T00:00:00Z',
      content_type: 'Text',
      title: '  ',
      description: 'hi',
      extra_field: 'ignored',
    },
  ]);
  const run = await runPipeline(d);
  assert.is(summaryOf(run, 'ingest').accepted, 4);
  const rows = await readSnapshot(
    d,
    'posts',
    `uuid, platform, tags, strftime(published_at, '%Y-%m-%dT%H:%M:%SZ') AS pub, like_count, view_count,
    comment_count, creator_id, follower_count, content_type, media, title, description`,
    'ORDER BY uuid',
  );
  const byId = Object.fromEntries(rows.map((r) => [r.uuid as string, r]));
  const n1 = byId.n1!;
  assert.is(n1.platform, 'tiktok');
  assert.equal(n1.tags, ['foo', 'bar', 'baz']);
  assert.is(n1.pub, '2026-10-01T10:00:00Z');
  assert.is(Number(n1.like_count), 12);
  assert.is(Number(n1.view_count), 100);
  assert.is(Number(n1.comment_count), 0);
  assert.is(Number(n1.creator_id), 77);
  assert.is(n1.content_type, 'image');
  assert.equal((n1.media as Array<{ path: string }>)[0]!.path, 'landing/batch/media/a.jpg');
  assert.equal(byId.n2!.tags, ['a', 'b', 'c', 'd']);
  assert.is(byId.n2!.pub, '2026-10-02T00:00:00Z', 'no offset means UTC');
  assert.is(byId.n2!.content_type, 'video');
  assert.equal((byId.n2!.media as Array<{ frames: string[] }>)[0]!.frames, ['landing/batch/media/f1.jpg']);
  assert.is(byId.n3!.content_type, 'carousel');
  assert.is(byId.n4!.content_type, 'text');
  assert.is(byId.n4!.title, null, 'blank strings become null');
  assert.is(byId.n4!.follower_count, null);
});

test('CSV: header by name, JSON cells, malformed rows quarantined with their data-row numbers', async () => {
  const d = tmpDir();
  const csv =
    [
      'UUID,platform,published_at,tags,like_count,media',
      'c1,youtube,2026-10-04T00:00:00Z,"[""x"",""#Y""]",3,',
      'c2,youtube,2026-10-04', // too few columns
      'c3,reddit,2026-10-05T00:00:00Z,a|b,-1,',
      'c4,reddit,2026-10-05T00:00:00Z,,7,,extra,columns',
      'c5,threads,2026-10-06T00:00:00Z,"a,b",8,',
    ].join('\r\n') + '\r\n';
  fs.mkdirSync(path.join(d, 'landing'), { recursive: true });
  fs.writeFileSync(path.join(d, 'landing', 'in.csv'), csv);
  const run = await runPipeline(d);
  const s = summaryOf(run, 'ingest');
  assert.is(s.read, 5);
  assert.is(s.accepted, 2);
  assert.is(s.quarantined, 3);
  assert.match(reasonsOf(d, 2).join(), /malformed CSV row/);
  assert.match(reasonsOf(d, 3).join(), /like_count must be a non-negative/);
  assert.match(reasonsOf(d, 4).join(), /malformed CSV row/);
  const rows = await readSnapshot(d, 'posts', 'uuid, tags', 'ORDER BY uuid');
  assert.equal(rows, [
    { uuid: 'c1', tags: ['x', 'y'] },
    { uuid: 'c5', tags: ['a', 'b'] },
  ]);
  assert.equal(parseCsvLine('a,"b,""c""",d'), ['a', 'b,"c"', 'd']);
});

test('Parquet input with typed and nested columns', async () => {
  const d = tmpDir();
  fs.mkdirSync(path.join(d, 'landing'), { recursive: true });
  const db = await openDuckDB();
  await db.run(`COPY (SELECT * FROM (VALUES
      ('p1', 'Reddit', '2026-10-01T00:00:00Z', 5::BIGINT, ['#One', 'two']),
      (NULL, 'reddit', '2026-10-01T00:00:00Z', 1::BIGINT, []::VARCHAR[]),
      ('p3', 'reddit', 'bad date', 1::BIGINT, []::VARCHAR[])
    ) t(uuid, platform, published_at, like_count, tags)) TO ${sqlString(path.join(d, 'landing', 'x.parquet'))} (FORMAT parquet)`);
  db.close();
  const run = await runPipeline(d);
  const s = summaryOf(run, 'ingest');
  assert.equal([s.read, s.accepted, s.quarantined], [3, 1, 2]);
  assert.equal(await readSnapshot(d, 'posts', 'uuid, platform, tags, like_count'), [
    { uuid: 'p1', platform: 'reddit', tags: ['one', 'two'], like_count: '5' },
  ]);
  assert.match(reasonsOf(d, 2).join(), /missing uuid/);
  assert.match(reasonsOf(d, 3).join(), /published_at is not a valid/);
});

test('an unreadable file is reported and quarantined whole, without stopping the run', async () => {
  const d = tmpDir();
  fs.mkdirSync(path.join(d, 'landing'), { recursive: true });
  fs.writeFileSync(path.join(d, 'landing', 'corrupt.parquet'), 'this is not parquet');
  writeLines(path.join(d, 'landing', 'good.ndjson'), [{ uuid: 'g1', ...ok }]);
  const run = await runPipeline(d);
  const s = summaryOf(run, 'ingest');
  assert.is(s.unreadableFiles, 1);
  assert.is(s.accepted, 1);
  const q = quarantined(d).find((x) => x.source_file === 'corrupt.parquet')!;
  assert.match(q.reasons[0]!, /file could not be read/);
  // Recorded by checksum: not retried (and not re-reported) until the bytes change.
  const again = summaryOf(await runPipeline(d), 'ingest');
  assert.is(again.files, 0);
  assert.is(again.skippedFiles, 2);
});

test('a line that is not UTF-8 is quarantined alone; an empty file is zero records', async () => {
  const d = tmpDir();
  fs.mkdirSync(path.join(d, 'landing'), { recursive: true });
  const line = (u: string) => Buffer.from(JSON.stringify({ uuid: u, ...ok }) + '\n');
  fs.writeFileSync(
    path.join(d, 'landing', 'mixed.ndjson'),
    Buffer.concat([line('a'), Buffer.from('\n'), Buffer.from('{"uuid":"bad\xff\xfe"}\n', 'latin1'), line('b'), line('c')]),
  );
  fs.writeFileSync(path.join(d, 'landing', 'empty.ndjson'), '');
  const s = summaryOf(await runPipeline(d), 'ingest');
  assert.equal([s.files, s.read, s.accepted, s.quarantined, s.unreadableFiles], [2, 4, 3, 1, 0]);
  const q = quarantined(d);
  assert.is(q.length, 1);
  assert.is(q[0]!.record, 3, 'record number = line number (blank lines count as lines)');
  assert.match(q[0]!.reasons[0]!, /unreadable line: .*utf-8/i);
  assert.equal(
    (await readSnapshot(d, 'posts', 'uuid', 'ORDER BY uuid')).map((r) => r.uuid),
    ['a', 'b', 'c'],
  );
});

test('precomputed embeddings of another dimension are quarantined with the expected one named', async () => {
  const d = tmpDir();
  const e = (n: number) => Array.from({ length: n }, (_, i) => i / n);
  writeLines(path.join(d, 'landing', 'a.ndjson'), [
    { uuid: 'a', ...ok, text_embedding: e(4) },
    { uuid: 'b', ...ok, text_embedding: e(4) },
    { uuid: 'c', ...ok, text_embedding: e(3) },
    { uuid: 'd', ...ok, visual_embedding: e(8) },
  ]);
  const s = summaryOf(await runPipeline(d, ['ingest']), 'ingest');
  assert.equal([s.accepted, s.quarantined], [3, 1]);
  assert.match(reasonsOf(d, 3).join(), /text_embedding has 3 dimensions, expected 4 \(the most common dimension in this file\)/);
  writeLines(path.join(d, 'landing', 'b.ndjson'), [
    { uuid: 'e', ...ok, text_embedding: e(5) },
    { uuid: 'f', ...ok, visual_embedding: e(2) },
  ]);
  const s2 = summaryOf(await runPipeline(d, ['ingest'], undefined, { VISUAL_EMBEDDING_DIM: '2' }), 'ingest');
  assert.equal([s2.accepted, s2.quarantined], [1, 1]);
  const q = quarantined(d).find((x) => x.source_file === 'b.ndjson')!;
  assert.match(q.reasons.join(), /text_embedding has 5 dimensions, expected 4 \(the embeddings already ingested\)/);
});

test('blank lines are not records; dot-files and .part files are not read', async () => {
  const d = tmpDir();
  fs.mkdirSync(path.join(d, 'landing'), { recursive: true });
  fs.writeFileSync(
    path.join(d, 'landing', 'a.ndjson'),
    `\n${JSON.stringify({ uuid: 'a', ...ok })}\n\n   \n${JSON.stringify({ uuid: 'b', ...ok })}`,
  );
  fs.writeFileSync(path.join(d, 'landing', '.hidden.ndjson'), JSON.stringify({ uuid: 'h', ...ok }));
  fs.writeFileSync(path.join(d, 'landing', 'upload.ndjson.part'), JSON.stringify({ uuid: 'p', ...ok }));
  const s = summaryOf(await runPipeline(d), 'ingest');
  assert.equal([s.files, s.read, s.accepted], [1, 2, 2]);
});

test.run();
