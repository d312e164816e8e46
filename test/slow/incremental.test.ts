// Incremental runs on the committed sample (docs/operations.md, "Incremental runs"): a run after a
// published generation computes only the new posts, reuses the sealed segments as they are (hard
// links), appends to the head, applies re-observations and deletions everywhere, keeps the map
// keys, and ranks and clusters as a full rebuild of the same data does, within the documented
// tolerance. Kill -9 at every point of an incremental run leaves the served generation whole and
// the next run correct (real child processes).
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { dataDirLayout } from '../../core/infra/data-dir.ts';
import { openDuckDB, sqlString } from '../../core/infra/duckdb.ts';
import { generationDir, readCurrent, readManifest, type Manifest } from '../../core/snapshots/generations.ts';
import { terms } from '../../core/text/analyzer.ts';
import { exactNeighbours } from '../../core/ranking/exact-neighbours.ts';
import { queryVector, search } from '../../core/ranking/search.ts';
import { searchGraphs, TAIL_SHARE, tailFile } from '../../core/ranking/segment-graphs.ts';
import { loadSearchIndex, type SearchIndex } from '../../core/ranking/search-index.ts';
import { segmentDir, withFirstRows } from '../../core/snapshots/segments.ts';
import { nmi } from '../../core/stats/cluster-metrics.ts';
import { pollUntil } from '../../core/infra/wait-at-most.ts';
import { loadGeneration, type GenerationData, type LoadedGeneration } from '../../serve/generation/loaded-generation.ts';
import { InThreadEngine } from '../../serve/search/in-thread-engine.ts';
import { labelKeys } from '../../core/maps/labels.ts';
import { LABEL_WORDS_FILE, labelText, RowLabelWords } from '../../core/maps/row-label-words.ts';
import { clusterAnswer } from '../../serve/search/answer-clusters.ts';
import { emergentNarratives } from '../../serve/search/answer-narratives.ts';
import { ROOT, spawnTs } from '../helpers/child.ts';
import {
  AS_OF,
  generationVectors,
  pipedSampleDir,
  pipedSampleInto,
  readSnapshot,
  runPipeline,
  sampleDataDir,
  sharedDataDir,
  summaryOf,
} from '../helpers/pipeline.ts';
import { cleanupTmp, tmpDir, writeLines } from '../helpers/tmp.ts';

/** Generations loaded here answer on this thread, as a server with SEARCH_THREADS=0 does. */
const engine = new InThreadEngine();

test.after.each(cleanupTmp);

const HOUR = 3_600_000;
const LATER = new Date(AS_OF.getTime() + HOUR);
const ENV = { SEGMENT_ROWS: '150' };

interface SamplePost {
  uuid: string;
  title: string | null;
  description: string | null;
  tags: string[];
  [k: string]: unknown;
}

/** The sample's posts with a title, and (given the uuids a run published) only those it accepted. */
function samplePosts(published?: Set<string>): SamplePost[] {
  const out: SamplePost[] = [];
  for (const line of fs.readFileSync(path.join(ROOT, 'fixtures', 'sample', 'posts', 'posts-00001.ndjson'), 'utf8').split('\n')) {
    try {
      const r = JSON.parse(line) as SamplePost;
      if (typeof r.uuid !== 'string' || typeof r.title !== 'string' || (published && !published.has(r.uuid))) continue;
      if (!out.some((x) => x.uuid === r.uuid)) out.push(r);
    } catch {
      // the sample's planted bad records
    }
  }
  return out;
}

/** A word of letters only, its own for each i (the analyzer splits digits off). */
const wordOf = (tag: string, i: number) => `${tag}x${String.fromCharCode(97 + (i % 26))}${String.fromCharCode(97 + Math.floor(i / 26))}`;

/** `n` new posts published in the hour after AS_OF: copies of sample posts' text, each marked with a word of its own. */
function newPosts(n: number, tag: string, published: Set<string>): SamplePost[] {
  return samplePosts(published)
    .slice(0, n)
    .map((p, i) => ({
      ...p,
      uuid: `${tag}-${i}`,
      title: `${wordOf(tag, i)} ${p.title}`,
      media: [],
      content_type: 'text',
      published_at: new Date(AS_OF.getTime() + (i + 1) * 60_000).toISOString(),
      observed_at: LATER.toISOString(),
    }));
}

async function current(d: string): Promise<{ dir: string; m: Manifest }> {
  const layout = dataDirLayout(d);
  const gen = (await readCurrent(layout))!;
  return { dir: generationDir(layout, gen), m: await readManifest(layout, gen) };
}

const topUuids = (index: SearchIndex, query: string, limit = 100) => search(index, { query, limit, window: 'all' }).map((r) => r.uuid);

/** The hour after the sample's full run (whose posts are `published`): 40 new posts, 10 re-observations and 8 deletions (one of a post not seen yet). */
function hourOne(published: Set<string>) {
  const sample = samplePosts(published);
  const fresh = newPosts(40, 'inc', published);
  // Observed later than any observation the sample has of them.
  const reobserved = sample.slice(40, 50).map((p) => ({ ...p, like_count: 777_777, observed_at: '2026-12-01T00:00:00Z' }));
  const deleted = sample.slice(60, 67).map((p) => p.uuid);
  return { fresh, reobserved, deleted };
}

/** The posts of the sample's full run in `d` (its current generation), then hour one landed beside the sample's file (its media paths are relative to it). */
async function landHourOne(d: string) {
  const hour = hourOne(new Set((await readSnapshot(d, 'posts', 'uuid')).map((r) => r.uuid as string)));
  writeLines(path.join(d, 'landing', 'sample', 'hour-1.ndjson'), [
    ...hour.fresh,
    ...hour.reobserved,
    ...hour.deleted.map((uuid) => ({ uuid, deleted: true })),
    { uuid: 'arrives-later', deleted: true },
  ]);
  return hour;
}

/** A full run on the sample (a copy of the file's one: pipedSampleDir), then hour one's incremental run, the test's own (its RunResult). */
async function incrementalSample() {
  const d = await pipedSampleDir({ env: ENV });
  const first = await current(d);
  const hour = await landHourOne(d);
  const run = await runPipeline(d, ['run'], LATER, ENV);
  return { d, first, run, ...hour, second: await current(d) };
}

/**
 * incrementalSample's data dir after its incremental run, for the tests that read it or run on
 * from it: the run made once (sharedDataDir), each test given its own copy.
 */
async function incrementedSample() {
  const d = await sharedDataDir('incremental.test.ts: the sample (SEGMENT_ROWS 150), then hour one at LATER', async (into) => {
    await pipedSampleInto(into, { env: ENV });
    await landHourOne(into);
    await runPipeline(into, ['run'], LATER, ENV);
  });
  const hour = hourOne(new Set((await readSnapshot(await pipedSampleDir({ env: ENV }), 'posts', 'uuid')).map((r) => r.uuid as string)));
  const second = await current(d);
  const layout = dataDirLayout(d);
  const before = second.m.previous_generation!;
  const first = { dir: generationDir(layout, before), m: await readManifest(layout, before) };
  return { d, first, ...hour, second };
}

test('an incremental run computes the new posts only, reuses sealed segments as hard links and appends to the head', async () => {
  const { first, run, second } = await incrementalSample();
  assert.is(first.m.run!.mode, 'full');
  assert.ok(first.m.segments!.length >= 3, `${first.m.segments!.length} segments`);
  const features = summaryOf(run, 'features');
  assert.is(features.mode, 'incremental');
  assert.is(features.computed, 40, 'only the new posts are analysed and embedded');
  assert.is(second.m.run!.mode, 'incremental');
  assert.is(second.m.embedder!.version, first.m.embedder!.version, 'the embedder is kept');
  const reused = second.m.run!.reused;
  assert.ok(reused.length >= 2, `reused ${reused}`);
  const segmentOf = (m: Manifest, id: string) => m.segments!.find((s) => s.id === id)!;
  for (const id of reused) {
    // A reused segment's graphs are searched: the generation says how many points they hold.
    const [was, is] = [segmentOf(first.m, id), segmentOf(second.m, id)];
    assert.ok(is.textPoints > 0, `${id} has text points`);
    assert.equal([is.textPoints, is.visualPoints], [was.textPoints, was.visualPoints], `${id}'s graph points`);
    for (const f of ['text.hnsw', 'bm25.bin', 'text-vectors.f32', 'enrichment.parquet']) {
      const a = fs.statSync(path.join(segmentDir(first.dir, id), f));
      const b = fs.statSync(path.join(segmentDir(second.dir, id), f));
      assert.is(a.ino, b.ino, `${id}/${f} is the same file`);
    }
  }
  // The head was appended to: its old rows first, the new posts after them.
  const head = second.m.segments![second.m.segments!.length - 1]!;
  const oldHead = first.m.segments![first.m.segments!.length - 1]!;
  assert.is(summaryOf(run, 'index').built, `${head.id}+${oldHead.id}:${head.rows}:${head.textPoints}/${head.visualPoints}`);
  assert.is(head.rows, oldHead.rows + 40);
  const uuids = fs.readFileSync(path.join(segmentDir(second.dir, head.id), 'uuids.txt'), 'utf8').split('\n');
  assert.equal(
    uuids.slice(0, oldHead.rows),
    fs
      .readFileSync(path.join(segmentDir(first.dir, oldHead.id), 'uuids.txt'), 'utf8')
      .split('\n')
      .slice(0, -1),
  );
});

test('after an incremental run: new posts searchable, counts updated, deletions gone from every surface', async () => {
  const { d, second, fresh, reobserved, deleted } = await incrementedSample();
  const gen = await engine.load(second.dir, null);
  // New posts: each found by its own word, first.
  for (const p of fresh.slice(0, 10)) {
    const top = await engine.search(gen, { query: `${p.title!.split(' ')[0]}`, limit: 5, window: '7d' });
    assert.is(top.ranked[0]?.uuid, p.uuid);
  }
  // Re-observations: the new counts.
  const likes = await readSnapshot(d, 'posts', 'uuid, like_count', `WHERE uuid IN (${reobserved.map((p) => `'${p.uuid}'`).join(',')})`);
  assert.equal(
    likes.map((r) => Number(r.like_count)),
    reobserved.map(() => 777_777),
  );
  // Deletions: not a post, not a creator's post, not a member, never a search result (lexical, vector, exact).
  const gone = new Set(deleted);
  const posts = await readSnapshot(d, 'posts', 'uuid');
  assert.is(posts.filter((r) => gone.has(r.uuid as string)).length, 0);
  assert.is(second.m.counts.masked, deleted.length, 'their rows are masked in the kept segments');
  assert.is(gen.posts, posts.length, 'the server counts the posts, not the masked rows');
  const creators = await readSnapshot(d, 'creators', 'sum(post_count)::INT AS n');
  assert.is(creators[0]!.n, posts.length);
  for (const t of ['narrative-members', 'pattern-members']) {
    const members = await readSnapshot(d, t, 'uuid');
    assert.is(members.filter((r) => gone.has(r.uuid as string)).length, 0, t);
  }
  const index = gen.index;
  const sample = samplePosts();
  for (const uuid of deleted) {
    const text = sample.find((p) => p.uuid === uuid)!.title!;
    for (const exact of [false, true]) {
      const found = search(index, { query: text, limit: 200, window: 'all' }, { exact }).map((r) => r.uuid);
      assert.not.ok(found.includes(uuid), `${uuid} found by "${text}" (exact ${exact})`);
    }
    assert.ok((await engine.search(gen, { query: text, limit: 200, window: 'all' })).ranked.every((r) => r.uuid !== uuid));
  }
  // A deletion that came before its post: the post never enters.
  writeLines(path.join(d, 'landing', 'hour-2.ndjson'), [{ ...sample[0]!, uuid: 'arrives-later', published_at: LATER.toISOString() }]);
  const run = await runPipeline(d, ['run'], new Date(LATER.getTime() + HOUR), ENV);
  assert.is(summaryOf(run, 'features').computed, 0);
  assert.is((await readSnapshot(d, 'posts', 'uuid', `WHERE uuid = 'arrives-later'`)).length, 0);
});

test('keys stay stable; an incremental generation ranks and clusters as a full rebuild of the same data does', async () => {
  const { d, first, second } = await incrementedSample();
  const readKeys = async (dir: string) => {
    const db = await openDuckDB();
    try {
      const rows = await db.all<{ k: string }>(
        `SELECT narrative_key AS k FROM read_parquet(${sqlString(path.join(dir, 'narratives.parquet'))}) WHERE window_key = 'all'`,
      );
      return new Set(rows.map((r) => r.k));
    } finally {
      db.close();
    }
  };
  const before = await readKeys(first.dir);
  const after = await readKeys(second.dir);
  const kept = [...before].filter((k) => after.has(k)).length;
  assert.ok(kept >= 0.9 * before.size, `${kept} of ${before.size} narrative keys kept`);

  // The same data rebuilt in full.
  const rebuilt = tmpDir();
  fs.cpSync(path.join(d, 'landing'), path.join(rebuilt, 'landing'), { recursive: true });
  await runPipeline(rebuilt, ['run'], LATER, ENV);
  const full = await current(rebuilt);
  assert.is(full.m.run!.mode, 'full');
  // Both fits read the posts before the as-of's UTC day (pipeline/features/refit-rule.ts): the hour's new posts
  // are not in the rebuild's fit; its 7 deleted posts are gone from it.
  assert.equal(
    [full.m.embedder!.fitted_as_of, full.m.embedder!.fitted_rows],
    ['2026-11-01T00:00:00.000Z', first.m.embedder!.fitted_rows - 7],
  );
  const inc = await loadSearchIndex(second.dir);
  const fresh = await loadSearchIndex(full.dir);
  // Queries: every post title's first three words, 60 of them.
  const queries = samplePosts()
    .filter((_, i) => i % 9 === 0)
    .slice(0, 60)
    .map((p) => p.title!.split(' ').slice(0, 3).join(' '));
  let overlap = 0;
  for (const q of queries) {
    const a = topUuids(inc, q);
    const b = new Set(topUuids(fresh, q));
    overlap += a.length ? a.filter((u) => b.has(u)).length / Math.max(a.length, b.size) : 1;
  }
  const meanOverlap = overlap / queries.length;
  assert.ok(meanOverlap >= 0.9, `mean top-100 overlap with a full rebuild ${meanOverlap.toFixed(3)}`);
  // The incremental generation's graphs find what an exact scan of its vectors finds, in every segment.
  let recall = 0;
  for (const q of queries) {
    const qv = queryVector(inc, terms(q));
    const exact = exactNeighbours(inc.vectors, qv, 50).map((x) => x.row);
    const graphs = new Set(searchGraphs(inc.hnsw!, qv, 50, 100).map((x) => x.row));
    recall += exact.length ? exact.filter((r) => graphs.has(r)).length / exact.length : 1;
  }
  assert.ok(recall / queries.length >= 0.95, `recall@50 of the incremental generation's graphs ${(recall / queries.length).toFixed(3)}`);
  // Narrative assignment of the same posts (window all), noise a label of its own.
  const assignment = async (dir: string) => {
    const db = await openDuckDB();
    try {
      const rows = await db.all<{ uuid: string; id: string }>(
        `SELECT uuid, narrative_id AS id FROM read_parquet(${sqlString(path.join(dir, 'narrative-members.parquet'))}) WHERE window_key = 'all'`,
      );
      return new Map(rows.map((r) => [r.uuid, r.id]));
    } finally {
      db.close();
    }
  };
  const a = await assignment(second.dir);
  const b = await assignment(full.dir);
  const posts = (await readSnapshot(d, 'posts', 'uuid')).map((r) => r.uuid as string);
  const score = nmi(
    posts.map((u) => a.get(u) ?? 'noise'),
    posts.map((u) => b.get(u) ?? 'noise'),
  );
  assert.ok(score >= 0.8, `narrative NMI against a full rebuild ${score.toFixed(3)}`);
});

/** Every served row's stored label keys against its text analysed; returns the rows a segment's file covers. */
function checkLabelWords(gen: LoadedGeneration, what: string): number {
  let covered = 0;
  for (let r = 0; r < gen.index.rows; r++) {
    const stored = gen.labelWords.keysOf(r);
    if (stored === null) continue;
    covered++;
    if (gen.index.deleted[r]) continue; // a masked row (a deleted post) has no text served, and is never returned
    const analysed = labelKeys(terms(labelText(gen.content.title.get(r), gen.content.description.get(r))));
    if (JSON.stringify(stored) !== JSON.stringify(analysed))
      assert.unreachable(`${what}: row ${r}: stored ${JSON.stringify(stored)}, its text gives ${JSON.stringify(analysed)}`);
  }
  return covered;
}

/** A generation's emergent narratives for `queries` (computed_at left out). */
function emergentOf(gen: GenerationData, queries: string[]): string {
  return JSON.stringify(
    queries.flatMap((q) => {
      const ranked = search(gen.index, { query: q, limit: 100, window: 'all' });
      return emergentNarratives(gen, 'all', terms(q).join(' '), ranked, clusterAnswer(gen.index.vectors, ranked)).map((e) => ({
        ...e.narrative,
        computed_at: null,
      }));
    }),
  );
}

// Label words (core/maps/row-label-words.ts): stored per segment by full and incremental runs as each row's text gives
// them; answers equal with and without them; a segment rebuilt from one without them has none.
test('label words: stored as the rows give them, answers equal with and without, none where a source had none', async () => {
  const { d, first, second } = await incrementedSample();
  const queries = samplePosts()
    .filter((_, i) => i % 23 === 0)
    .map((p) => p.title!.split(' ').slice(0, 2).join(' '));
  for (const [what, g] of [
    ['full', first],
    ['incremental', second],
  ] as const) {
    const gen = await loadGeneration(g.dir);
    assert.is(gen.labelWords.segments.length, g.m.segments!.length, `${what}: every segment has its label words`);
    assert.is(checkLabelWords(gen, what), gen.index.rows, `${what}: every row covered`);
    // The same narratives as from each row's text analysed (a view without label words has its own row cache).
    const analysed = emergentOf({ ...gen, labelWords: new RowLabelWords([]) }, queries);
    assert.ok(analysed.includes('"source":"emergent"'), `${what}: the queries form emergent narratives`);
    assert.is(emergentOf(gen, queries), analysed, `${what}: emergent narratives equal`);
  }
  // Segments served without the file (as ones written before it existed): a late post rebuilds the
  // older segment it falls into, whose other rows come from the served one, with no file (their words
  // are unknown); the reused segments have none either.
  for (const s of second.m.segments!) fs.rmSync(path.join(segmentDir(second.dir, s.id), LABEL_WORDS_FILE));
  const published = await readSnapshot(d, 'posts', 'uuid, CAST(epoch_ms(published_at) AS DOUBLE) AS t', 'ORDER BY row_id');
  const inside = new Date((published[200]!.t as number) + 1000).toISOString();
  const late = newPosts(3, 'late', new Set(published.map((r) => r.uuid as string))).map((p) => ({ ...p, published_at: inside }));
  writeLines(path.join(d, 'landing', 'sample', 'hour-2.ndjson'), late);
  const run = await runPipeline(d, ['run'], new Date(LATER.getTime() + HOUR), ENV);
  const third = await current(d);
  const before = new Set(second.m.segments!.map((s) => s.id));
  const rebuilt = withFirstRows(third.m.segments!).filter((s) => !before.has(s.id));
  assert.is(rebuilt.length, 1, `one segment rebuilt: ${summaryOf(run, 'features').segments}`);
  for (const s of third.m.segments!)
    assert.not.ok(fs.existsSync(path.join(segmentDir(third.dir, s.id), LABEL_WORDS_FILE)), `segment ${s.id}: no label words`);
  const gen = await loadGeneration(third.dir);
  assert.is(checkLabelWords(gen, 'third'), 0);
  assert.is(gen.labelWords.keysOf(rebuilt[0]!.firstRow), null);
  assert.is(
    emergentOf(gen, queries),
    emergentOf({ ...gen, labelWords: new RowLabelWords([]) }, queries),
    'third: emergent narratives equal',
  );
});

const FAILPOINTS = [
  'ingest.before-commit',
  'features.after-segments',
  'index.after-graphs',
  'publish.after-tables',
  'publish.before-current-switch',
];

for (const fp of FAILPOINTS) {
  test(`kill -9 at ${fp} of an incremental run: the served generation stays whole, the next run is correct`, async () => {
    const d = await pipedSampleDir({ env: ENV });
    const layout = dataDirLayout(d);
    const served = await current(d);
    const published = new Set((await readSnapshot(d, 'posts', 'uuid')).map((r) => r.uuid as string));
    writeLines(path.join(d, 'landing', 'hour-1.ndjson'), [
      ...newPosts(20, 'crash', published),
      { uuid: samplePosts(published)[80]!.uuid, deleted: true },
    ]);
    const fpDir = tmpDir('fp-');
    const child = spawnTs('pipeline/run/cli.ts', ['run', '--data-dir', d, '--as-of', LATER.toISOString()], {
      ...ENV,
      FAILPOINTS: fp,
      FAILPOINT_DIR: fpDir,
      LOG_LEVEL: 'silent',
    });
    await pollUntil(`failpoint ${fp}`, () => fs.existsSync(path.join(fpDir, fp)), 60_000);
    child.proc.kill('SIGKILL');
    assert.is((await child.exited).signal, 'SIGKILL');
    assert.is(await readCurrent(layout), served.m.generation);
    // The served generation still loads and answers.
    const gen = await engine.load(served.dir, null);
    assert.is(gen.index.rows, served.m.counts.rows);
    assert.ok((await engine.search(gen, { query: 'news', limit: 10, window: 'all' })).ranked.length > 0);

    const run = await runPipeline(d, ['run'], LATER, ENV);
    const next = await current(d);
    assert.is(next.m.run!.mode, 'incremental');
    assert.is(summaryOf(run, 'features').computed, 20, 'the new posts computed once');
    assert.is(next.m.counts.posts, served.m.counts.posts! + 20 - 1);
    assert.is(next.m.counts.masked, 1);
    const again = await engine.load(next.dir, null);
    const top = await engine.search(again, { query: wordOf('crash', 3), limit: 5, window: 'all' });
    assert.is(top.ranked[0]?.uuid, 'crash-3');
  });
}

test('window tails: built where a window keeps less than half of a segment, searched in place of the filtered graph, kept by the next run', async () => {
  const env = { ...ENV, WINDOW_TAIL_MIN_ROWS: '1' };
  const d = sampleDataDir();
  const full = await runPipeline(d, ['run'], AS_OF, env);
  const first = await current(d);
  const index = await loadSearchIndex(first.dir, { enrichment: false });
  const vectors = generationVectors(first.dir, 'text');
  const dim = index.hnsw!.dim;
  let expected = 0;
  for (const seg of withFirstRows(first.m.segments!)) {
    for (const w of ['7d', '30d', '90d'] as const) {
      const L = index.windowStart[w] - seg.firstRow;
      if (L <= 0 || L >= seg.rows || seg.rows - L >= TAIL_SHARE * seg.rows) continue;
      expected++;
      const t = (seg.textTails ?? []).filter((x) => x.from <= L && seg.rows - L >= TAIL_SHARE * (seg.rows - x.from)).pop();
      assert.ok(t, `${seg.id}: a tail for the ${w} window (local row ${L})`);
      let points = 0;
      for (let r = seg.firstRow + t.from; r < seg.firstRow + seg.rows; r++)
        if (vectors.subarray(r * dim, (r + 1) * dim).some((x) => x !== 0)) points++;
      assert.is(t.points, points, `${seg.id}'s tail from ${t.from}: its rows with a vector`);
      assert.ok(fs.existsSync(path.join(segmentDir(first.dir, seg.id), tailFile(t.from))));
    }
  }
  assert.ok(expected > 0, 'the sample has a window starting in the later half of a segment');
  assert.match(String(summaryOf(full, 'index').tails), /^[1-9]\d* built, 0 kept/);

  // On graphs this small both searches are exhaustive: the tail returns exactly what the filtered segment graph does.
  const plain = { ...index.hnsw!, segments: index.hnsw!.segments.map((s) => ({ ...s, tails: [] })) };
  let compared = 0;
  for (const p of samplePosts().slice(0, 30)) {
    const q = queryVector(index, terms(p.title!));
    if (!q.some((x) => x !== 0)) continue;
    for (const w of ['7d', '30d', '90d', 'all'] as const) {
      const a = searchGraphs(index.hnsw!, q, 20, 200, index.windowStart[w]);
      const b = searchGraphs(plain, q, 20, 200, index.windowStart[w]);
      assert.equal(
        a.map((x) => x.row),
        b.map((x) => x.row),
        `${w}: ${p.title}`,
      );
      assert.ok(a.every((x) => x.row >= index.windowStart[w]));
      compared++;
    }
  }
  assert.ok(compared > 40, `${compared} searches compared`);

  // An hour later the windows have moved by a few rows at most: the reused segments keep their tails (the same files).
  const published = new Set((await readSnapshot(d, 'posts', 'uuid')).map((r) => r.uuid as string));
  writeLines(path.join(d, 'landing', 'sample', 'hour-1.ndjson'), newPosts(10, 'tail', published));
  const next = await runPipeline(d, ['run'], LATER, env);
  const second = await current(d);
  assert.match(String(summaryOf(next, 'index').tails), /kept/);
  for (const id of second.m.run!.reused) {
    const was = first.m.segments!.find((s) => s.id === id)!;
    for (const t of second.m.segments!.find((s) => s.id === id)!.textTails ?? []) {
      if (!(was.textTails ?? []).some((x) => x.from === t.from)) continue;
      const a = fs.statSync(path.join(segmentDir(first.dir, id), tailFile(t.from)));
      const b = fs.statSync(path.join(segmentDir(second.dir, id), tailFile(t.from)));
      assert.is(a.ino, b.ino, `${id}'s tail from ${t.from} is the same file`);
    }
  }
});

test('window tails: an appended head extends its tail by the new rows (the rows before them as they were)', async () => {
  // Segments of 300 rows leave the sample's 7d window in the later half of the head (295 rows; still so with 5 more).
  const env = { SEGMENT_ROWS: '300', WINDOW_TAIL_MIN_ROWS: '1' };
  const d = sampleDataDir();
  await runPipeline(d, ['run'], AS_OF, env);
  const first = await current(d);
  const oldHead = first.m.segments!.at(-1)!;
  assert.ok(oldHead.to === null && (oldHead.textTails ?? []).length === 1, `the head has a tail: ${JSON.stringify(oldHead.textTails)}`);
  const published = new Set((await readSnapshot(d, 'posts', 'uuid')).map((r) => r.uuid as string));
  writeLines(path.join(d, 'landing', 'sample', 'hour-1.ndjson'), newPosts(5, 'ext', published));
  await runPipeline(d, ['run'], LATER, env);
  const second = await current(d);
  const head = second.m.segments!.at(-1)!;
  assert.is(head.rows, oldHead.rows + 5, 'appended');
  const [was] = oldHead.textTails!;
  const [is] = head.textTails ?? [];
  assert.ok(is && is.from === was!.from, `the tail kept its first row: ${JSON.stringify(head.textTails)}`);
  assert.is(is.points, was!.points + 5, 'extended by the new rows (each has text)');
  const index = await loadSearchIndex(second.dir, { enrichment: false });
  const plain = { ...index.hnsw!, segments: index.hnsw!.segments.map((s) => ({ ...s, tails: [] })) };
  let compared = 0;
  for (const p of [...newPosts(5, 'ext', published), ...samplePosts().slice(0, 20)]) {
    const q = queryVector(index, terms(p.title!));
    if (!q.some((x) => x !== 0)) continue;
    const a = searchGraphs(index.hnsw!, q, 20, 200, index.windowStart['7d']);
    const b = searchGraphs(plain, q, 20, 200, index.windowStart['7d']);
    // The same similarities; the same rows above the last one's similarity (rows tied with the 20th,
    // duplicate posts, may be cut at it differently by either graph).
    assert.equal(
      a.map((x) => x.sim.toFixed(5)),
      b.map((x) => x.sim.toFixed(5)),
      p.title!,
    );
    const cut = a.at(-1)!.sim + 1e-6;
    assert.equal(
      a.filter((x) => x.sim > cut).map((x) => x.row),
      b.filter((x) => x.sim > cut).map((x) => x.row),
      p.title!,
    );
    compared++;
  }
  assert.ok(compared >= 20, `${compared} searches compared`);
});

test.run();
