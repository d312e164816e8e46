// Tests of the fixture corpus generator: determinism, ground truth consistency, media, the CSV and
// Parquet outputs, the CLI contract, and that the committed sample is still what it generates.
import { createHash } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import sharp from 'sharp';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { generateCorpus, type GenerateOptions } from '../../fixtures/generate.ts';
import { VISUAL_EMBEDDING_DIM } from '../../fixtures/visual-embedding.ts';
import { rejects } from '../helpers/assert.ts';
import { ROOT } from '../helpers/child.ts';

const AS_OF = '2026-11-01T00:00:00Z';
const tmp = mkdtempSync(path.join(os.tmpdir(), 'fixtures-test-'));
test.after(() => rmSync(tmp, { recursive: true, force: true }));

type Json = Record<string, unknown>;
interface Truth {
  meta: Json;
  narratives: Json[];
  motifs: Json[];
  posts: Map<string, Json>;
  reobs: Json[];
  bad: Json[];
}

function readTruth(file: string): Truth {
  const t: Truth = { meta: {}, narratives: [], motifs: [], posts: new Map(), reobs: [], bad: [] };
  for (const line of readFileSync(file, 'utf8').trim().split('\n')) {
    const e = JSON.parse(line) as Json;
    if (e.type === 'meta') t.meta = e;
    else if (e.type === 'narrative') t.narratives.push(e);
    else if (e.type === 'motif') t.motifs.push(e);
    else if (e.type === 'post') t.posts.set(e.uuid as string, e);
    else if (e.type === 'reobservation') t.reobs.push(e);
    else if (e.type === 'bad') t.bad.push(e);
  }
  return t;
}

/** sha256 of every file under dir, keyed by relative path. */
function hashTree(dir: string): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else out.set(path.relative(dir, p), createHash('sha256').update(readFileSync(p)).digest('hex'));
    }
  };
  walk(dir);
  return out;
}

interface Line {
  file: string;
  record: number;
  value: Json | null;
}

function readNdjson(dir: string, files: string[]): Line[] {
  const lines: Line[] = [];
  for (const f of files) {
    const name = path.basename(f);
    readFileSync(path.join(dir, name), 'utf8')
      .split('\n')
      .slice(0, -1)
      .forEach((text, i) => {
        let value: Json | null = null;
        try {
          value = JSON.parse(text) as Json;
        } catch {
          value = null;
        }
        lines.push({ file: name, record: i + 1, value });
      });
  }
  return lines;
}

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{3})?(Z|[+-]\d{2}:\d{2})$/;
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
const isCount = (v: unknown) => typeof v === 'number' && Number.isInteger(v) && v >= 0;

/** An independent check of what ingest must reject; returns a reason or null. */
function problem(r: Json | null, dir: string): string | null {
  if (r === null) return 'malformed_json';
  if (typeof r.uuid !== 'string' || r.uuid === '') return 'missing_uuid';
  for (const k of ['published_at', 'observed_at']) {
    if (typeof r[k] !== 'string' || !ISO.test(r[k] as string) || Number.isNaN(Date.parse(r[k] as string))) return 'bad_date';
  }
  if (typeof r.creator_id !== 'number' || !(r.title === null || typeof r.title === 'string')) return 'wrong_type';
  if (!Array.isArray(r.tags) || r.tags.some((t) => typeof t !== 'string')) return 'wrong_type';
  for (const k of ['like_count', 'comment_count', 'share_count', 'view_count']) {
    if (typeof r[k] !== 'number') return 'wrong_type';
    if (!isCount(r[k])) return 'negative_count';
  }
  for (const m of (r.media as { path: string; frames?: string[] }[] | undefined) ?? []) {
    for (const p of [m.path, ...(m.frames ?? [])]) if (!existsSync(path.join(dir, p))) return 'missing_media';
  }
  return null;
}

async function gen(name: string, opts: Partial<GenerateOptions>) {
  const outDir = path.join(tmp, name);
  const summary = await generateCorpus({ posts: 400, outDir, seed: 11, asOf: AS_OF, ...opts });
  return { outDir, summary, truth: readTruth(summary.truthFile) };
}

test('same seed and as-of give byte-identical files, media included; another seed differs', async () => {
  const a = await gen('det-a', { posts: 400, format: 'ndjson' });
  const b = await gen('det-b', { posts: 400, format: 'ndjson' });
  const ha = hashTree(a.outDir);
  assert.ok(ha.size > 300, 'media files were written');
  assert.equal([...ha], [...hashTree(b.outDir)]);
  assert.ok(readFileSync(a.summary.truthFile).equals(readFileSync(b.summary.truthFile)), 'truth identical');
  const c = await gen('det-c', { posts: 400, seed: 12, media: false });
  assert.not.equal(
    readFileSync(path.join(c.outDir, 'posts-00001.ndjson'), 'utf8'),
    readFileSync(path.join(a.outDir, 'posts-00001.ndjson'), 'utf8'),
  );
});

test('every record is a truth post, a re-observation or a listed bad record', async () => {
  const { outDir, summary, truth } = await gen('truth', { posts: 3000, media: false, partSize: 1000, seed: 5 });
  assert.is(summary.files.length, Math.ceil(summary.records / 1000));
  assert.is(truth.meta.posts, 3000);
  assert.is(truth.posts.size, 3000);
  assert.is(truth.meta.records, summary.records);

  const lines = readNdjson(outDir, summary.files);
  assert.is(lines.length, summary.records);
  const badAt = new Map(truth.bad.map((b) => [`${b.file}#${b.record}`, b.reason as string]));
  const reobsAt = new Map(truth.reobs.map((r) => [`${r.file}#${r.record}`, r.uuid as string]));
  assert.is(badAt.size, summary.bad);
  assert.ok(summary.bad >= 15 && summary.bad <= 30, `~0.5% bad (${summary.bad})`);
  const first = new Map<string, Json>();
  for (const l of lines) {
    const key = `${l.file}#${l.record}`;
    const why = problem(l.value, outDir);
    if (badAt.has(key)) {
      assert.is(why, badAt.get(key), `bad record ${key} is detected as ${badAt.get(key)}`);
      continue;
    }
    assert.is(why, null, `record ${key} is valid`);
    const r = l.value as Json;
    const uuid = r.uuid as string;
    if (reobsAt.has(key)) {
      assert.is(reobsAt.get(key), uuid);
      const before = first.get(uuid);
      assert.ok(before, 're-observation comes after its post');
      assert.ok(Date.parse(r.observed_at as string) > Date.parse(before?.observed_at as string), 'later observed_at');
      assert.ok((r.view_count as number) > (before?.view_count as number) && (r.like_count as number) > (before?.like_count as number));
      continue;
    }
    assert.ok(truth.posts.has(uuid), `post ${uuid} is in the truth`);
    assert.not.match(`${r.title ?? ''}${r.description ?? ''}`, LONE_SURROGATE, 'text is well-formed Unicode');
    assert.not.ok(first.has(uuid), `post ${uuid} appears once`);
    first.set(uuid, r);
    const published = Date.parse(r.published_at as string),
      observed = Date.parse(r.observed_at as string);
    assert.ok(published <= observed && observed <= Date.parse(AS_OF), 'published <= observed <= as-of');
  }
  assert.is(first.size, 3000);
  assert.ok(truth.reobs.length >= 10, 're-observations exist');

  // Narratives: at least 40 at default settings, every shape planted at least 5 times.
  assert.ok(truth.narratives.length >= 40);
  const shapes = new Map<string, number>();
  for (const n of truth.narratives) shapes.set(n.lifecycle as string, (shapes.get(n.lifecycle as string) ?? 0) + 1);
  for (const s of ['emerging', 'growing', 'peaking', 'declining', 'dormant', 'steady']) assert.ok((shapes.get(s) ?? 0) >= 5, `${s} x5`);

  // The planted lifecycles hold in the data: dormant narratives are silent in the last 30 days,
  // emerging ones start within the last 3 weeks.
  const asOf = Date.parse(AS_OF);
  const byNarrative = new Map<string, number[]>();
  for (const [uuid, p] of truth.posts) {
    if (p.narrative === null) continue;
    const ageDays = (asOf - Date.parse(first.get(uuid)?.published_at as string)) / 86_400_000;
    byNarrative.set(p.narrative as string, [...(byNarrative.get(p.narrative as string) ?? []), ageDays]);
  }
  for (const n of truth.narratives) {
    const ages = byNarrative.get(n.id as string) ?? [];
    assert.ok(ages.length >= 15, `${n.id} has enough posts (${ages.length})`);
    if (n.lifecycle === 'dormant')
      assert.ok(
        ages.every((a) => a > 30),
        `${n.id} dormant`,
      );
    if (n.lifecycle === 'emerging')
      assert.ok(
        ages.every((a) => a <= 21),
        `${n.id} emerging`,
      );
  }

  // Kinds and languages in the planned proportions; derived posts point at an earlier original.
  const kinds = new Map<string, number>();
  let foreign = 0;
  for (const p of truth.posts.values()) {
    kinds.set(p.kind as string, (kinds.get(p.kind as string) ?? 0) + 1);
    if (p.language !== 'en') foreign++;
    if (p.kind === 'repost' || p.kind === 'near_duplicate') {
      const orig = truth.posts.get(p.of as string);
      assert.ok(orig, 'original is a truth post');
      assert.is(p.narrative, orig?.narrative);
      assert.is(p.motif, orig?.motif);
    }
    if (p.kind === 'repost') {
      const text = first.get(p.uuid as string)?.description as string | null;
      const origText = first.get(p.of as string)?.description as string | null;
      if (origText !== null) assert.ok(text?.endsWith(origText), 'repost repeats the text');
    }
  }
  const share = (k: string) => (kinds.get(k) ?? 0) / 3000;
  assert.ok(share('repost') > 0.015 && share('repost') < 0.045, `reposts ${share('repost')}`);
  assert.ok(share('near_duplicate') > 0.008 && share('near_duplicate') < 0.035, `near-duplicates ${share('near_duplicate')}`);
  assert.ok(share('noise') > 0.12 && share('noise') < 0.18, `noise ${share('noise')}`);
  assert.ok(foreign / 3000 > 0.03 && foreign / 3000 < 0.08, `non-English ${foreign / 3000}`);
  const platforms = new Set([...first.values()].map((r) => (r.platform as string).toLowerCase()));
  assert.ok(platforms.size >= 6);
});

test('media of valid records exist and decode; missing-media records point nowhere', async () => {
  const { outDir, summary, truth } = await gen('media', { posts: 300, seed: 9 });
  const badAt = new Set(truth.bad.map((b) => `${b.file}#${b.record}`));
  let checked = 0;
  let videos = 0;
  for (const l of readNdjson(outDir, summary.files)) {
    if (l.value === null) continue;
    const media = (l.value.media as { kind: string; path: string; frames?: string[] }[] | undefined) ?? [];
    for (const m of media) {
      const paths = [m.path, ...(m.frames ?? [])];
      if (m.kind === 'video') {
        videos++;
        assert.is(m.frames?.length, 4);
      }
      for (const p of paths) {
        assert.not.ok(path.isAbsolute(p), 'relative media path');
        if (badAt.has(`${l.file}#${l.record}`) && !existsSync(path.join(outDir, p))) continue;
        const meta = await sharp(path.join(outDir, p)).metadata();
        assert.is(meta.width, 64);
        assert.is(meta.height, 64);
        checked++;
      }
    }
  }
  assert.ok(checked > 200 && videos > 20, `decoded ${checked} pictures, ${videos} videos`);
  assert.is(readdirSync(path.join(outDir, 'media')).length, summary.mediaFiles);
  assert.ok(truth.bad.some((b) => b.reason === 'missing_media'));
});

test('--video-frames: videos carry that many frames, everything else as with the default; out of range refused', async () => {
  const four = await gen('frames-4', { posts: 300, seed: 9 });
  const two = await gen('frames-2', { posts: 300, seed: 9, videoFrames: 2 });
  const videos = (outDir: string, files: string[]) =>
    readNdjson(outDir, files).flatMap((l) =>
      ((l.value?.media as { kind: string; frames?: string[] }[] | undefined) ?? []).filter((m) => m.kind === 'video'),
    );
  const v2 = videos(two.outDir, two.summary.files);
  assert.ok(v2.length > 20);
  assert.ok(v2.every((m) => m.frames?.length === 2));
  assert.is(v2.length, videos(four.outDir, four.summary.files).length);
  assert.equal([...two.truth.posts.keys()], [...four.truth.posts.keys()], 'the same posts');
  assert.ok(two.summary.mediaFiles < four.summary.mediaFiles * 0.8, `${two.summary.mediaFiles} files against ${four.summary.mediaFiles}`);
  for (const bad of [1, 17, 2.5])
    await rejects(() => gen(`frames-${bad}`, { posts: 10, videoFrames: bad }), /video frames must be an integer in \[2, 16\]/);
});

async function duck<T = Json>(sql: string): Promise<T[]> {
  const instance = await DuckDBInstance.create(':memory:');
  const conn = await instance.connect();
  try {
    return (await conn.runAndReadAll(sql)).getRowObjects() as T[];
  } finally {
    conn.closeSync();
    instance.closeSync();
  }
}

test('vectors mode: posts with pictures carry a visual_embedding near their motif direction, and no media is drawn', async () => {
  const { outDir, summary, truth } = await gen('vectors', { media: false, visualEmbeddings: true });
  assert.not.ok(existsSync(path.join(outDir, 'media')));
  const motifOf = new Map([...truth.posts].map(([u, t]) => [u, t.motif as string | null]));
  const byMotif = new Map<string, number[][]>();
  let carried = 0;
  for (const { value: r } of readNdjson(outDir, summary.files)) {
    if (!r || typeof r.uuid !== 'string' || !Array.isArray(r.visual_embedding)) continue;
    const v = r.visual_embedding as number[];
    assert.is(v.length, VISUAL_EMBEDDING_DIM);
    assert.ok(Math.abs(Math.hypot(...v) - 1) < 1e-4);
    carried++;
    const m = motifOf.get(r.uuid);
    if (m) byMotif.set(m, [...(byMotif.get(m) ?? []), v]);
  }
  assert.ok(carried > 50, `${carried} posts with an embedding`);
  const cos = (a: number[], b: number[]) => a.reduce((x, y, i) => x + y * b[i]!, 0);
  const [m1, m2] = [...byMotif.values()].filter((l) => l.length >= 2);
  assert.ok(cos(m1![0]!, m1![1]!) > 0.6, 'same motif: close');
  assert.ok(cos(m1![0]!, m2![0]!) < 0.6, 'other motif: apart');
  const refused = await generateCorpus({ posts: 10, outDir: path.join(tmp, 'bad'), visualEmbeddings: true }).then(
    () => null,
    (e: Error) => e,
  );
  assert.match(refused?.message ?? '', /media off/);
});

test('CSV and Parquet outputs are readable by DuckDB', async () => {
  const csv = await gen('csv', { posts: 800, media: false, format: 'csv', seed: 21 });
  const csvFile = path.join(csv.outDir, 'posts-00001.csv');
  const header = readFileSync(csvFile, 'utf8').split('\r\n')[0];
  assert.is(
    header,
    'uuid,platform,content_type,creator_id,creator_handle,follower_count,title,description,tags,published_at,observed_at,' +
      'like_count,comment_count,share_count,view_count,content_url,media,language',
  );
  // RFC 4180 dialect spelled out (DuckDB's sniffer may otherwise guess '#' as a comment marker);
  // null_padding keeps the short rows, which need the serial reader.
  const read =
    `read_csv('${csvFile}', header = true, delim = ',', quote = '"', escape = '"', comment = ` +
    `'', all_varchar = true, null_padding = true, strict_mode = false, parallel = false)`;
  const [all] = await duck<{ n: bigint }>(`SELECT count(*) AS n FROM ${read}`);
  assert.is(Number(all?.n), csv.summary.records);
  const rows = await duck<{ uuid: string | null; tags: string | null; media: string | null }>(`SELECT uuid, tags, media FROM ${read}`);
  const parsed = rows.filter((r) => r.uuid && r.tags?.startsWith('[') && r.media !== null);
  assert.ok(
    parsed.length > 780 && parsed.every((r) => Array.isArray(JSON.parse(r.tags ?? '')) && Array.isArray(JSON.parse(r.media ?? ''))),
  );
  assert.ok(csv.truth.bad.some((b) => b.reason === 'column_count'));

  const pq = await gen('parquet', { posts: 800, media: false, format: 'parquet', seed: 21, partSize: 500 });
  assert.is(pq.summary.files.length, 2);
  const glob = path.join(pq.outDir, 'posts-*.parquet');
  const [count] = await duck<{ n: bigint }>(`SELECT count(*) AS n FROM read_parquet('${glob}')`);
  assert.is(Number(count?.n), pq.summary.records);
  const types = new Map(
    (await duck<{ column_name: string; column_type: string }>(`DESCRIBE SELECT * FROM read_parquet('${glob}')`)).map((r) => [
      r.column_name,
      r.column_type,
    ]),
  );
  assert.is(types.get('like_count'), 'BIGINT');
  assert.is(types.get('tags'), 'VARCHAR[]');
  assert.is(types.get('published_at'), 'VARCHAR');
  assert.match(types.get('media') ?? '', /^STRUCT\(kind VARCHAR, "?path"? VARCHAR, frames VARCHAR\[\]\)\[\]$/);
  const [nulls] = await duck<{ n: bigint }>(`SELECT count(*) AS n FROM read_parquet('${glob}') WHERE uuid IS NULL`);
  assert.is(Number(nulls?.n), pq.truth.bad.filter((b) => b.reason === 'missing_uuid').length);
  assert.not.ok(
    pq.truth.bad.some((b) => b.reason === 'wrong_type' || b.reason === 'malformed_json'),
    'only typed-representable damage',
  );
});

test('CLI: --help, a one-line error with exit code 2, a JSON summary', () => {
  const run = (...args: string[]) =>
    spawnSync(process.execPath, ['--import', 'tsx', path.join(ROOT, 'fixtures/cli.ts'), ...args], { cwd: ROOT, encoding: 'utf8' });
  const help = run('--help');
  assert.is(help.status, 0);
  assert.match(help.stdout, /--narratives K/);
  for (const args of [
    ['generate', '--posts', 'lots', '--out', tmp],
    ['generate', '--posts', '5'],
    ['generate', '--posts', '5', '--out', tmp, '--format', 'xml'],
    ['frobnicate'],
  ]) {
    const r = run(...args);
    assert.is(r.status, 2, args.join(' '));
    assert.is(r.stderr.trim().split('\n').length, 1);
  }
  const ok = run('generate', '--posts', '50', '--out', path.join(tmp, 'cli'), '--media', 'off', '--as-of', AS_OF);
  assert.is(ok.status, 0, ok.stderr);
  const summary = JSON.parse(ok.stdout) as Json;
  assert.is(summary.posts, 50);
  assert.ok(existsSync(path.join(tmp, 'cli.truth.ndjson')), 'truth beside DIR by default');
});

test('the committed sample is exactly what the generator produces today', async () => {
  const sample = path.join(ROOT, 'fixtures/sample');
  const outDir = path.join(tmp, 'sample-posts');
  const truthFile = path.join(tmp, 'sample-truth.ndjson');
  await generateCorpus({ posts: 600, seed: 7, asOf: AS_OF, outDir, truthFile });
  assert.ok(
    readFileSync(truthFile).equals(readFileSync(path.join(sample, 'truth.ndjson'))),
    'truth.ndjson is current (see fixtures/README.md)',
  );
  const fresh = hashTree(outDir);
  const committed = hashTree(path.join(sample, 'posts'));
  assert.equal([...fresh.keys()], [...committed.keys()], 'same files');
  for (const [name, hash] of fresh) if (name.startsWith('posts-')) assert.is(committed.get(name), hash, `${name} is current`);
});

test.run();
