// Precomputed embeddings from the input: adopted as the vector space when most rows carry one
// (rows without one and queries are mapped in by the fitted ridge map), ignored below that share.
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { terms } from '../../core/text/analyzer.ts';
import { dataDirLayout } from '../../core/infra/data-dir.ts';
import { generationDir, readCurrent } from '../../core/snapshots/generations.ts';
import { searchGraphs } from '../../core/ranking/segment-graphs.ts';
import { queryVector, search } from '../../core/ranking/search.ts';
import { loadSearchIndex } from '../../core/ranking/search-index.ts';
import { loadVectorSpace, RidgeFit, toSpace } from '../../core/vectors/vector-space.ts';
import { ROOT } from '../helpers/child.ts';
import { generationGraphs, generationVectors, readSnapshot, runPipeline } from '../helpers/pipeline.ts';
import { cleanupTmp, tmpDir } from '../helpers/tmp.ts';

const DIM = 48;
const truth = fs
  .readFileSync(path.join(ROOT, 'fixtures', 'sample', 'truth.ndjson'), 'utf8')
  .split('\n')
  .filter(Boolean)
  .map((l) => JSON.parse(l));
const narrativeOf = new Map<string, string | null>(truth.filter((t) => t.type === 'post').map((t) => [t.uuid, t.narrative]));

/** Deterministic pseudo-random numbers (mulberry32). */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), a | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296 - 0.5;
  };
}

function uuidSeed(uuid: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < uuid.length; i++) h = Math.imul(h ^ uuid.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

/**
 * An "upstream model": each narrative a direction, each post its narrative's direction plus noise.
 * A function of the uuid, so a re-observed post sends the same vector.
 */
function upstreamEmbedding(uuid: string): number[] {
  const n = narrativeOf.get(uuid);
  const r = rng(uuidSeed(uuid));
  const centre = rng(n ? Number(n.slice(1)) + 1000 : uuidSeed(uuid) + 1);
  return Array.from({ length: DIM }, () => centre() + 0.25 * r());
}

/** The sample's posts with a text_embedding on a share of them; returns the data dir and what was sent. */
function corpusWithEmbeddings(share: number): { d: string; sent: Map<string, number[]> } {
  const sent = new Map<string, number[]>();
  const d = tmpDir();
  const landing = path.join(d, 'landing', 'sample');
  fs.cpSync(path.join(ROOT, 'fixtures', 'sample', 'posts'), landing, { recursive: true });
  const file = fs.readdirSync(landing).find((f) => f.endsWith('.ndjson'))!;
  const lines = fs
    .readFileSync(path.join(landing, file), 'utf8')
    .split('\n')
    .map((line) => {
      let rec: Record<string, unknown>;
      try {
        rec = JSON.parse(line);
      } catch {
        return line; // the sample's planted bad lines stay as they are
      }
      if (typeof rec.uuid === 'string' && uuidSeed(rec.uuid) % 100 < share * 100)
        sent.set(rec.uuid, (rec.text_embedding = upstreamEmbedding(rec.uuid)) as number[]);
      return JSON.stringify(rec);
    });
  fs.writeFileSync(path.join(landing, file), lines.join('\n'));
  return { d, sent };
}

test('ridge map: recovers a linear map exactly (noise-free) and reports R^2 = 1', () => {
  const r = rng(3);
  const p = 6;
  const q = 4;
  const w = Array.from({ length: p * q }, () => r());
  const fit = new RidgeFit(p, q);
  for (let n = 0; n < 400; n++) {
    const x = Float32Array.from({ length: p }, () => r());
    const y = new Float32Array(q);
    for (let i = 0; i < p; i++) for (let j = 0; j < q; j++) y[j]! += x[i]! * w[i * q + j]!;
    fit.add(x, y);
  }
  const { map, r2 } = fit.solve(1e-9);
  for (let k = 0; k < p * q; k++) assert.ok(Math.abs(map[k]! - w[k]!) < 1e-3, `w[${k}]`);
  assert.ok(r2 > 0.999999, `r2 ${r2}`);
});

test('most rows with a text_embedding: it is the text space, rows without are mapped in, queries find their narrative', async () => {
  const { d, sent } = corpusWithEmbeddings(0.8);
  await runPipeline(d);
  const dir = generationDir(dataDirLayout(d), (await readCurrent(dataDirLayout(d)))!);
  const space = loadVectorSpace(dir, 'text');
  assert.is(space.source, 'precomputed');
  assert.is(space.dim, DIM);
  assert.ok(space.precomputedRows > 0 && space.mappedRows > 0, JSON.stringify(space));
  assert.ok(space.mapR2! > 0.3, `map R^2 ${space.mapR2}`);
  assert.is(generationGraphs(dir, 'text').dim, DIM);

  // A row that brought its vector is indexed by it (unit length); the others hold mapped vectors.
  const posts = await readSnapshot(d, 'posts', 'uuid');
  const vectors = generationVectors(dir, 'text');
  assert.is(vectors.length, posts.length * DIM);
  posts.forEach((p, row) => {
    const v = vectors.subarray(row * DIM, (row + 1) * DIM);
    const norm = Math.hypot(...v);
    const e = sent.get(p.uuid as string);
    if (e) {
      const n = Math.hypot(...e);
      e.forEach((x, i) => assert.ok(Math.abs(x / n - v[i]!) < 1e-5));
    } else if (norm > 0) assert.ok(Math.abs(norm - 1) < 1e-4);
  });

  // Queries go through our embedder and the map: a narrative's keywords find its posts.
  const index = await loadSearchIndex(dir);
  let hits = 0;
  let total = 0;
  for (const n of truth.filter((t) => t.type === 'narrative')) {
    const qv = queryVector(index, terms(n.keywords.slice(0, 3).join(' ')));
    assert.is(qv.length, DIM);
    const top = searchGraphs(index.hnsw!, qv, 10, 100);
    hits += top.filter((x) => narrativeOf.get(index.uuid.get(x.row)!) === n.id).length;
    total += 10;
    assert.ok(search(index, { query: n.keywords.slice(0, 3).join(' '), limit: 20, window: 'all' }).length > 0);
  }
  assert.ok(hits / total >= 0.6, `vector precision@10 through the map ${hits / total}`);
  assert.equal(toSpace(index.textSpace, new Float32Array(space.ownDim)), new Float32Array(DIM), 'no terms: zero vector');
});

test('few rows with a text_embedding: our own space is kept', async () => {
  const { d, sent } = corpusWithEmbeddings(0.2);
  await runPipeline(d);
  const dir = generationDir(dataDirLayout(d), (await readCurrent(dataDirLayout(d)))!);
  const space = loadVectorSpace(dir, 'text');
  assert.is(space.source, 'computed');
  assert.is(space.dim, 128);
  const uuids = new Set((await readSnapshot(d, 'posts', 'uuid')).map((p) => p.uuid as string));
  assert.is(space.precomputedRows, [...sent.keys()].filter((u) => uuids.has(u)).length);
  assert.ok(space.precomputedRows > 50);
});

test.after.each(cleanupTmp);
test.run();
