// Features and index stages on the committed sample: BM25 scores by the formula, HNSW recall
// against exact search, narrative queries against the ground truth, artifacts that load, and
// publish refusing artifacts built for other rows.
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { planTails } from '../../pipeline/indexes/window-tails.ts';
import { terms } from '../../core/text/analyzer.ts';
import { BM25_B, BM25_K1, buildBm25, loadBm25, saveBm25, searchBm25 } from '../../core/ranking/bm25.ts';
import { dataDirLayout } from '../../core/infra/data-dir.ts';
import { embed, loadEmbedder, type EmbedderModel } from '../../core/vectors/embedder.ts';
import { generationDir, readCurrent, readManifest, type Manifest } from '../../core/snapshots/generations.ts';
import { graphPoints, searchGraphs, type LoadedGraphs } from '../../core/ranking/segment-graphs.ts';
import { segmentDir } from '../../core/snapshots/segments.ts';
import { ROOT } from '../helpers/child.ts';
import { describeSnapshot, generationGraphs, generationVectors, pipedSampleDir, readSnapshot, runPipeline } from '../helpers/pipeline.ts';
import { rejects } from '../helpers/assert.ts';
import { cleanupTmp, tmpDir } from '../helpers/tmp.ts';

test.after.each(cleanupTmp);

test('BM25 scores follow the formula (k1 1.2, b 0.75, Lucene idf); filter applies before the cut; save/load is exact', async () => {
  const vocab = ['battery', 'recall', 'phone', 'launch'];
  const docs = [[0, 1, 0], [2, 3], [0, 2, 3, 3], [1]];
  const offsets = new Uint32Array([0, 3, 5, 9, 10]);
  const ids = new Uint32Array(docs.flat());
  const idx = buildBm25(vocab, offsets, ids);
  const avgdl = 10 / 4;
  const idf = (df: number) => Math.log(1 + (4 - df + 0.5) / (df + 0.5));
  const part = (tf: number, dl: number, df: number) =>
    (idf(df) * (tf * (BM25_K1 + 1))) / (tf + BM25_K1 * (1 - BM25_B + (BM25_B * dl) / avgdl));
  const r = searchBm25(idx, ['battery', 'recall'], 10);
  assert.equal(
    r.map((x) => x.row),
    [0, 3, 2],
  );
  assert.ok(Math.abs(r[0]!.score - (part(2, 3, 2) + part(1, 3, 2))) < 1e-9);
  assert.equal(
    searchBm25(idx, ['battery'], 10, (row) => row !== 0).map((x) => x.row),
    [2],
  );
  assert.equal(searchBm25(idx, ['nothing'], 10), []);
  const file = path.join(tmpDir(), 'bm25.bin');
  await saveBm25(idx, file);
  const back = await loadBm25(file);
  assert.equal(searchBm25(back, ['battery', 'phone', 'launch'], 10), searchBm25(idx, ['battery', 'phone', 'launch'], 10));
});

/** A full run on the sample (the file's one per env, each test its own copy: pipedSampleDir). */
const publishedSample = (env: Record<string, string> = {}) => pipedSampleDir({ env });

/** HNSW recall@10 against an exact scan, for 100 query rows, in each window (rows >= start). */
function windowedRecall(set: LoadedGraphs, vectors: Float32Array, dim: number, rows: number, starts: number[]): number {
  let hit = 0;
  let total = 0;
  for (const start of starts) {
    for (let q = 0; q < rows; q += Math.ceil(rows / 100)) {
      const qv = vectors.subarray(q * dim, (q + 1) * dim);
      const exact = Array.from({ length: rows - start }, (_, i) => {
        const r = start + i;
        let s = 0;
        for (let c = 0; c < dim; c++) s += qv[c]! * vectors[r * dim + c]!;
        return { r, s };
      })
        .sort((a, b) => b.s - a.s || a.r - b.r)
        .slice(0, 10)
        .map((x) => x.r);
      const approx = new Set(searchGraphs(set, qv, 10, 100, start).map((n) => n.row));
      hit += exact.filter((r) => approx.has(r)).length;
      total += exact.length;
    }
  }
  return hit / total;
}

test('segmented graphs: the sample cut in time segments finds what one graph finds, in every window', async () => {
  const one = await publishedSample();
  const many = await publishedSample({ SEGMENT_ROWS: '150', PIPELINE_THREADS: '3' });
  const dirOf = async (d: string) => generationDir(dataDirLayout(d), (await readCurrent(dataDirLayout(d)))!);
  const [d1, d2] = [await dirOf(one), await dirOf(many)];
  const s1 = generationGraphs(d1, 'text');
  const s2 = generationGraphs(d2, 'text');
  assert.is(s1.segments.length, 1);
  assert.ok(s2.segments.length >= 3, `${s2.segments.length} segments`);
  const manifest = await readManifest(dataDirLayout(many), path.basename(d2));
  const rows = manifest.counts.posts!;
  // Contiguous, each at least SEGMENT_ROWS but the head, cut at UTC day boundaries.
  const segs = manifest.segments!;
  assert.is(
    segs.reduce((a, s) => a + s.rows, 0),
    rows,
  );
  for (const s of segs.slice(0, -1)) {
    assert.ok(s.rows >= 150, `${s.id}: ${s.rows} rows`);
    assert.ok(s.to !== null && s.to.endsWith('T00:00:00.000Z'), `${s.id} ends at a day boundary: ${s.to}`);
  }
  assert.is(segs[segs.length - 1]!.to, null, 'the newest segment is the open head');
  for (let i = 1; i < segs.length; i++) assert.is(segs[i]!.from, segs[i - 1]!.to, 'segments follow one another');
  assert.is(graphPoints(s1), graphPoints(s2));
  // Same features either way: the graphs differ, the vectors do not.
  const vectors = generationVectors(d2, 'text');
  assert.equal(Array.from(vectors), Array.from(generationVectors(d1, 'text')));
  const starts = [0, Math.floor(rows / 3), Math.floor((2 * rows) / 3), rows - 20];
  const r2 = windowedRecall(s2, vectors, s2.dim, rows, starts);
  assert.ok(r2 >= 0.95, `segmented recall@10 ${r2}`);
  // The visual graphs hold every row with media.
  const visual = generationGraphs(d2, 'visual');
  const withMedia = await readSnapshot(many, 'visual-elements', 'count(*)::INT AS n', 'WHERE visual_error IS NULL');
  assert.is(graphPoints(visual), withMedia[0]!.n);
  const some = generationVectors(d2, 'visual');
  const firstRow = Array.from({ length: rows }, (_, r) => r).find((r) => some.subarray(r * 160, (r + 1) * 160).some((x) => x !== 0))!;
  assert.is(searchGraphs(visual, some.subarray(firstRow * 160, (firstRow + 1) * 160), 1, 50)[0]!.row, firstRow);
});

/** The generation's files, every row with media with its visual vector and elements. */
async function checkArtifacts(d: string, dir: string, m: Manifest): Promise<void> {
  const seg = `segments/${m.segments![0]!.id}`;
  for (const f of [
    'embedder.bin',
    `${seg}/text-vectors.f32`,
    `${seg}/bm25.bin`,
    `${seg}/text.hnsw`,
    `${seg}/visual.hnsw`,
    `${seg}/visual-vectors.f32`,
    `${seg}/visual-elements.parquet`,
    `${seg}/neighbour-scores.parquet`,
    `${seg}/enrichment.parquet`,
    `${seg}/doc-terms.bin`,
    `${seg}/uuids.txt`,
    'deleted-rows.u32',
  ])
    assert.ok(
      m.files.some((x) => x.name === f),
      f,
    );
  const rows = m.counts.posts!;
  // Every row with media has its visual vector and elements; rows without have zeros.
  const withMedia = await readSnapshot(d, 'posts', 'count(*)::INT AS n', 'WHERE len(media) > 0');
  const elements = await readSnapshot(d, 'visual-elements', 'count(*)::INT AS n, count(*) FILTER (WHERE visual_error IS NULL)::INT AS ok');
  assert.equal([elements[0]!.n, elements[0]!.ok], [withMedia[0]!.n, withMedia[0]!.n]);
  assert.is(generationVectors(dir, 'visual').length, rows * 160);
}

/** Novelty: a repost or near-duplicate repeats an earlier post, so it has (almost) none. */
async function checkNovelty(d: string, rows: number): Promise<void> {
  const kinds = new Map(
    fs
      .readFileSync(path.join(ROOT, 'fixtures', 'sample', 'truth.ndjson'), 'utf8')
      .split('\n')
      .filter((l) => l.includes('"type":"post"'))
      .map((l) => JSON.parse(l))
      .map((t) => [t.uuid as string, t.kind as string]),
  );
  const scores = await readSnapshot(
    d,
    'neighbour-scores',
    'row_id::INT AS row, novelty_score AS novelty, saturation_score AS saturation, coverage_novelty AS covered',
    'ORDER BY row_id',
  );
  assert.is(scores.length, rows);
  const postUuids = (await readSnapshot(d, 'posts', 'uuid')).map((r) => r.uuid as string);
  const mean = (k: string[], f: 'novelty' | 'saturation') => {
    const xs = scores.filter((x) => k.includes(kinds.get(postUuids[x.row as number]!)!)).map((x) => x[f] as number);
    return xs.reduce((a, b) => a + b, 0) / xs.length;
  };
  for (const x of scores) {
    assert.ok(
      x.covered === true &&
        (x.novelty as number) >= 0 &&
        (x.novelty as number) <= 1 &&
        (x.saturation as number) >= 0 &&
        (x.saturation as number) <= 1,
    );
  }
  assert.ok(mean(['repost', 'near_duplicate'], 'novelty') < 0.05, 'copies are not novel');
  // In the word space an original sits near earlier posts of its story (the sample's originals: 0.22
  // on average; 0.3 and more in LSA's space, where only shared words brought posts together).
  assert.ok(mean(['original'], 'novelty') > 0.15, 'originals are');
  assert.ok(
    mean(['original'], 'novelty') > 20 * mean(['repost', 'near_duplicate'], 'novelty'),
    'originals are, many times more than copies',
  );
  assert.ok(mean(['repost', 'near_duplicate'], 'saturation') > mean(['original'], 'saturation'));
}

/** The text vectors, and HNSW's top 10 against the exact top 10 by inner product (100 query rows, over all rows and in a late window). */
async function checkTextRecall(dir: string, rows: number): Promise<{ model: EmbedderModel; hnsw: LoadedGraphs }> {
  const model = await loadEmbedder(path.join(dir, 'embedder.bin'));
  const dim = model.params.dim;
  const vectors = generationVectors(dir, 'text');
  assert.is(vectors.length, rows * dim);

  const hnsw = generationGraphs(dir, 'text');
  const recall = windowedRecall(hnsw, vectors, dim, rows, [0, Math.floor(rows / 2)]);
  assert.ok(recall >= 0.95, `recall@10 ${recall}`);
  return { model, hnsw };
}

/** A narrative's own keywords find its posts, lexically and by vector. */
async function checkNarrativeQueries(d: string, dir: string, m: Manifest, model: EmbedderModel, hnsw: LoadedGraphs): Promise<void> {
  const truthLines = fs
    .readFileSync(path.join(ROOT, 'fixtures', 'sample', 'truth.ndjson'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l));
  const narrativeOf = new Map(truthLines.filter((t) => t.type === 'post').map((t) => [t.uuid, t.narrative]));
  const uuids = (await readSnapshot(d, 'posts', 'uuid')).map((r) => r.uuid as string);
  const bm25 = await loadBm25(path.join(segmentDir(dir, m.segments![0]!.id), 'bm25.bin'));
  let lexical = 0;
  let vector = 0;
  const narratives = truthLines.filter((t) => t.type === 'narrative');
  for (const n of narratives) {
    const query = terms(n.keywords.slice(0, 3).join(' '));
    lexical += searchBm25(bm25, query, 10).filter((x) => narrativeOf.get(uuids[x.row]!) === n.id).length;
    vector += searchGraphs(hnsw, embed(model, query), 10, 100).filter((x) => narrativeOf.get(uuids[x.row]!) === n.id).length;
  }
  const pLex = lexical / (10 * narratives.length);
  const pVec = vector / (10 * narratives.length);
  assert.ok(pLex >= 0.8, `BM25 precision@10 ${pLex}`);
  assert.ok(pVec >= 0.6, `vector precision@10 ${pVec}`);
}

test('features + index on the sample: artifacts in the generation, HNSW recall@10 >= 0.95 vs exact, narrative queries hit their narrative', async () => {
  const d = await publishedSample();
  const layout = dataDirLayout(d);
  const gen = (await readCurrent(layout))!;
  const dir = generationDir(layout, gen);
  const m = await readManifest(layout, gen);
  await checkArtifacts(d, dir, m);
  const rows = m.counts.posts!;
  await checkNovelty(d, rows);
  const { model, hnsw } = await checkTextRecall(dir, rows);
  await checkNarrativeQueries(d, dir, m, model, hnsw);
});

test('publish refuses per-row artifacts built for another as-of or other rows', async () => {
  const d = await publishedSample();
  // An earlier as-of is refused first (pipeline-cli.test.ts); allowed here, the artifacts' own guard speaks.
  await rejects(() => runPipeline(d, ['publish'], new Date('2026-10-01T00:00:00Z')), /is older than the served generation/);
  await rejects(
    () => runPipeline(d, ['publish'], new Date('2026-10-01T00:00:00Z'), {}, { allowRewind: true }),
    /run the features and index stages/,
  );
  await rejects(() => runPipeline(d, ['index'], new Date('2026-10-01T00:00:00Z'), {}, { allowRewind: true }), /run the features stage for/);
});

test('an empty snapshot still publishes every per-row table with its columns', async () => {
  const d = tmpDir();
  fs.mkdirSync(path.join(d, 'landing'), { recursive: true });
  fs.writeFileSync(path.join(d, 'landing', 'bad.ndjson'), '{"platform":"x"}\n');
  await runPipeline(d);
  for (const [table, expected] of [
    [
      'enrichment',
      [
        'row_id',
        'tone',
        'tone_confidence',
        'emotion_mood',
        'brand_products',
        'themes',
        'aesthetic_style',
        'attribute_confidence',
        'coverage_sentiment',
        'coverage_attributes',
        'coverage_visual',
        'flagged',
      ],
    ],
    ['visual-elements', ['row_id', 'dominant_colors', 'aesthetic_style', 'layout', 'motion', 'visual_error']],
    ['neighbour-scores', ['row_id', 'novelty_score', 'saturation_score', 'coverage_novelty']],
  ] as const) {
    const names = (await describeSnapshot(d, table)).map((r) => r.column_name);
    assert.equal(names, [...expected], table);
  }
});

test('window tails plan: none where the window keeps half a segment, one per start otherwise, kept or extended while they serve', () => {
  const reuse = { rows: 1000, action: 'reuse' as const, base: null };
  assert.equal(planTails(reuse, [400], [], 1), [], 'the window keeps 60%: the segment graph, filtered');
  assert.equal(planTails(reuse, [600], [], 1), [{ action: 'build', from: 600 }]);
  assert.equal(planTails(reuse, [600], [], 2000), [], 'a segment under the minimum rows');
  assert.equal(planTails(reuse, [600, 700], [], 1), [{ action: 'build', from: 600 }], 'one tail serves both starts (300 of 400 rows)');
  assert.equal(planTails(reuse, [600, 900], [], 1), [
    { action: 'build', from: 600 },
    { action: 'build', from: 900 },
  ]);
  assert.equal(planTails(reuse, [650], [{ from: 600, points: 390 }], 1), [{ action: 'keep', from: 600, points: 390 }]);
  assert.equal(
    planTails(reuse, [850], [{ from: 600, points: 390 }], 1),
    [{ action: 'build', from: 850 }],
    'the old tail keeps 150 of 400 rows',
  );
  const appended = { rows: 1100, action: 'build' as const, base: 's000007' };
  assert.equal(planTails(appended, [650], [{ from: 600, points: 390 }], 1), [{ action: 'extend', from: 600, basePoints: 390 }]);
  const fresh = { rows: 1100, action: 'build' as const, base: null };
  assert.equal(planTails(fresh, [650], [{ from: 600, points: 390 }], 1), [{ action: 'build', from: 650 }]);
});

test.run();
