// The narratives stage on the committed sample: field contracts of a narrative (docs/api.md), noise handling,
// tracking of keys across two generations with trajectory history, and empty and tiny windows.
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ari, nmi } from '../../core/stats/cluster-metrics.ts';
import { terms } from '../../core/text/analyzer.ts';
import { loadBm25, searchBm25 } from '../../core/ranking/bm25.ts';
import { dataDirLayout } from '../../core/infra/data-dir.ts';
import { generationDir, readCurrent } from '../../core/snapshots/generations.ts';
import {
  CLUSTER_DEFAULTS,
  clusterWindow,
  distanceMatrix,
  kGrid,
  silhouette,
  splitWhileSilhouetteRises,
} from '../../core/clustering/kmeans-by-silhouette.ts';
import { seedCentres } from '../../core/stats/kmeans-plus-plus.ts';
import { KernelKMeans, seedPositions } from '../../core/clustering/kernel-kmeans.ts';
import { kmeans } from 'ml-kmeans';
import { ClassCounts, labelFrom, labelKeys } from '../../core/maps/labels.ts';
import { feelingCode, feelingCodeSql, narrativeSentiment, sentimentOfCodes } from '../../core/maps/sentiment.ts';
import { mostCentralFirst } from '../../core/maps/members.ts';
import { cleanForSummary, postReadable, summarise } from '../../core/maps/label-and-summary.ts';
import { openDuckDB } from '../../core/infra/duckdb.ts';
import { RowLabelKeys } from '../../pipeline/narratives/corpus.ts';
import { BURST_DAMPING, burstScoreOf, dailyCounts, lifecycleOf, seriesStats, slope, sustainedStartAge } from '../../core/maps/series.ts';
import { DAY_MS } from '../../core/snapshots/windows.ts';
import { matchClusters, overlapCoefficient } from '../../core/clustering/tracking.ts';
import { groupSums, partitionSums, unitOf, vectorSum } from '../../core/clustering/merge-models.ts';
import { AS_OF, readSnapshot, runPipeline, pipedSampleDir } from '../helpers/pipeline.ts';
import { cleanupTmp, tmpDir } from '../helpers/tmp.ts';

const LIFECYCLES = ['emerging', 'growing', 'peaking', 'declining', 'dormant', 'steady'];

test('metrics: NMI and ARI are 1 for a relabelled identical clustering, about 0 for an unrelated one', () => {
  const t = ['a', 'a', 'b', 'b', 'c', 'c'];
  assert.ok(Math.abs(nmi(t, ['x', 'x', 'y', 'y', 'z', 'z']) - 1) < 1e-12);
  assert.ok(Math.abs(ari(t, ['x', 'x', 'y', 'y', 'z', 'z']) - 1) < 1e-12);
  assert.ok(ari(t, ['x', 'y', 'z', 'x', 'y', 'z']) < 0.05);
});

test('series: counts by day, slope, lifecycle shapes', () => {
  const asOf = Date.parse('2026-11-01T00:00:00Z');
  assert.equal(Array.from(dailyCounts([asOf - 1, asOf - DAY_MS - 1, asOf - 1], asOf, 3)), [0, 1, 2]);
  assert.is(slope([1, 2, 3, 4]), 1);
  const shape = (f: (d: number) => number, days = 120) => Float64Array.from({ length: days }, (_, d) => f(d));
  assert.is(
    lifecycleOf(
      shape(() => 5),
      119,
    ),
    'steady',
  );
  assert.is(
    lifecycleOf(
      shape((d) => (d < 40 ? 10 : 0)),
      110,
    ),
    'dormant',
  );
  assert.is(
    lifecycleOf(
      shape((d) => (d >= 105 ? (d - 100) * 2 : 0)),
      15,
    ),
    'emerging',
  );
  assert.is(
    lifecycleOf(
      shape((d) => 1 + d / 10),
      119,
    ),
    'growing',
  );
  assert.is(
    lifecycleOf(
      shape((d) => 20 * Math.exp(-0.5 * ((d - 110) / 5) ** 2)),
      40,
    ),
    'peaking',
  );
  assert.is(
    lifecycleOf(
      shape((d) => (d < 60 ? 1 : 40 * Math.exp(-(d - 60) / 15))),
      80,
    ),
    'declining',
  );
  assert.is(
    lifecycleOf(
      shape(() => 1, 7),
      5,
    ),
    null,
    'a 7-day window is too short for a shape',
  );
  const s = seriesStats([asOf - 1000, asOf - 2000], asOf, 30);
  assert.ok(s.momentumScore === 1 && s.emergingScore > 0.9 && s.trajectoryConfidence === 'low');
});

test('sustained start: stray older posts that share the words do not age a new story', () => {
  const counts = new Float64Array(30);
  counts[3] = counts[9] = counts[15] = 1;
  counts[28] = 10;
  counts[29] = 15;
  assert.is(sustainedStartAge(counts), 2, 'the two days of the story, not the stray posts weeks before');
  assert.is(lifecycleOf(counts, sustainedStartAge(counts)), 'emerging');
  assert.is(sustainedStartAge(new Float64Array([0, 0, 1, 0, 1])), 3, 'single posts: from the first one');
  assert.is(sustainedStartAge(new Float64Array(5)), 0);
});

test('lifecycle: a young story far below its peak day is past its peak, not emerging; an older one declining', () => {
  // A crisis 11 days old: 931 posts, the last 3 days a few percent of the peak.
  const counts = new Float64Array(30);
  [400, 220, 120, 70, 45, 30, 20, 12, 8, 4, 2].forEach((x, i) => (counts[19 + i] = x));
  assert.is(lifecycleOf(counts, sustainedStartAge(counts)), 'peaking');
  const older = new Float64Array(60);
  [400, 220, 120, 70, 45, 30, 20, 12, 8, 4, 2].forEach((x, i) => (older[25 + i] = x));
  older.fill(2, 36);
  assert.is(lifecycleOf(older, sustainedStartAge(older)), 'declining', 'its peak day 35 days ago');
  // The same shape still at a third of its peak: not yet declining by the fall rule.
  const slow = counts.map((x, i) => (i >= 27 ? 140 : x));
  assert.is.not(lifecycleOf(slow, sustainedStartAge(slow)), 'declining');
});

test('lifecycle: steady talk is steady, whatever its noise; a small rise is noise, not growth', () => {
  let seed = 9;
  const rand = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  for (let k = 0; k < 20; k++) {
    const noisy = Float64Array.from({ length: 30 }, () => Math.floor(rand() * 7));
    noisy[Math.floor(rand() * 27)] = 9; // a noisy peak day well before the last 3
    assert.is(lifecycleOf(noisy, sustainedStartAge(noisy)), 'steady', `noisy steady talk ${Array.from(noisy)}`);
  }
  const rise = Float64Array.from({ length: 30 }, (_, i) => (i < 10 ? 1 : i >= 20 ? 3 : 2));
  assert.is(lifecycleOf(rise, 30), 'growing', '10 posts then 30: a real rise');
  const small = Float64Array.from({ length: 30 }, (_, i) => (i === 2 ? 1 : i === 25 || i === 28 ? 1 : 0));
  assert.is(lifecycleOf(small, 30), 'steady', '1 post then 2: noise');
});

test('burst score: steady talk near 0 however noisy, a story that broke in the window high, small counts damped', () => {
  let seed = 5;
  const rand = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  const steady = Float64Array.from({ length: 30 }, () => 20 + Math.floor(rand() * 9) - 4);
  assert.ok(burstScoreOf(steady) < 2, `steady talk ${burstScoreOf(steady)}`);
  const story = new Float64Array(30);
  [400, 220, 120, 70, 45, 30, 20, 12, 8, 4, 2].forEach((x, i) => (story[19 - 11 + i] = x));
  assert.ok(Math.abs(burstScoreOf(story) - 400 / Math.sqrt(BURST_DAMPING)) < 1e-9, 'its breaking day over nothing');
  const few = new Float64Array(30);
  few[29] = 3;
  assert.ok(burstScoreOf(few) < 1.5, 'three posts over nothing');
  // Days before the corpus has any post say nothing: steady talk from the corpus's first day is not a burst.
  const late = steady.map((x, i) => (i < 20 ? 0 : x));
  const active = Float64Array.from({ length: 30 }, (_, i) => (i < 20 ? 0 : 1));
  assert.ok(burstScoreOf(late) > 5, `counted as zeros: ${burstScoreOf(late)}`);
  assert.ok(burstScoreOf(late, active) < 2, `only the corpus's days: ${burstScoreOf(late, active)}`);
});

test('group sums: disjoint groups summed in one pass equal vectorSum group by group; overlapping groups too', () => {
  const dim = 5;
  const rows = 40;
  let seed = 3;
  const rand = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  const vectors = Float32Array.from({ length: rows * dim }, () => rand() - 0.5);
  const has = Uint8Array.from({ length: rows }, (_, r) => (r % 7 === 3 ? 0 : 1));
  const disjoint = [[0, 4, 9, 30], [1, 2, 3, 39], [], [10, 11, 12, 13, 14]];
  const overlapping = [
    [0, 4, 9],
    [4, 9, 20],
  ];
  for (const groups of [disjoint, overlapping]) {
    const got = groupSums(vectors, dim, has, groups);
    groups.forEach((g, k) => {
      const want = vectorSum(
        vectors,
        dim,
        g.filter((r) => has[r] === 1),
      );
      assert.equal(Array.from(got[k]!), Array.from(want), `group ${k}`);
    });
  }
  // Several partitions in one pass (a map's windows), a row in a group of each.
  const partitions = [disjoint, overlapping, [[5, 6, 7, 39]]];
  const all = partitionSums(vectors, dim, has, partitions);
  partitions.forEach((groups, p) =>
    groups.forEach((g, k) => {
      const want = vectorSum(
        vectors,
        dim,
        g.filter((r) => has[r] === 1),
      );
      assert.equal(Array.from(all[p]![k]!), Array.from(want), `partition ${p}, group ${k}`);
    }),
  );
});

test('labels: c-TF-IDF prefers terms specific to a cluster; bigrams absorb their words', () => {
  const c = new ClassCounts(2);
  c.add(0, ['sourdough', 'starter', 'sourdough starter', 'bread', 'sourdough', 'starter', 'sourdough starter']);
  c.add(1, ['bread', 'oven']);
  const top = c.top(0, 5);
  assert.is(labelFrom(top, 2).split(', ')[0], 'sourdough starter');
  assert.not.ok(labelFrom(top, 3).split(', ').includes('sourdough'));
  assert.is(c.top(1, 1)[0]!.key, 'oven', 'a term of this cluster only beats one shared with another');
});

test('sentiment: score, label, stance shares that sum to 1', () => {
  const s = narrativeSentiment([
    { tone: 'positive', moods: ['joy'] },
    { tone: 'positive', moods: [] },
    { tone: 'negative', moods: ['anger'] },
    { tone: 'neutral', moods: [] },
    { tone: 'negative', moods: ['joy', 'anger'] },
    { tone: null, moods: [] },
  ]);
  assert.is(s.score, 0);
  assert.is(s.label, 'mixed', 'as many positive as negative posts, each at least a quarter');
  const st = s.breakdown.stance!;
  assert.ok(Math.abs(st.critical + st.mixed + st.neutral + st.supportive - 1) < 1e-12);
  assert.is(st.mixed, 1 / 5);
  assert.is(s.breakdown.coverage, 5 / 6);
  assert.equal(narrativeSentiment([{ tone: null, moods: [] }]).label, null);
});

test('sentiment by feeling codes: the SQL code equals the JS one, and counting codes equals narrativeSentiment', async () => {
  const tones = [null, 'negative', 'neutral', 'positive'];
  const moodSets = [[], ['joy'], ['anger'], ['joy', 'anger'], ['optimism', 'sadness', 'fear'], ['fear']];
  const posts = tones.flatMap((tone) => moodSets.map((moods) => ({ tone, moods })));
  const db = await openDuckDB();
  try {
    const values = posts.map(
      (p, i) => `(${i}, ${p.tone ? `'${p.tone}'` : 'NULL'}, [${p.moods.map((m) => `'${m}'`).join(', ')}]::VARCHAR[])`,
    );
    const sql = await db.numbers(
      `SELECT ${feelingCodeSql('tone', 'moods')}::UTINYINT AS code FROM (VALUES ${values.join(', ')}) v(i, tone, moods) ORDER BY i`,
    );
    assert.equal(Array.from(sql.code!), posts.map(feelingCode));
    const nullMoods = await db.numbers(`SELECT ${feelingCodeSql("'positive'", 'NULL::VARCHAR[]')}::UTINYINT AS code`);
    assert.is(nullMoods.code![0], feelingCode({ tone: 'positive', moods: [] }), 'NULL moods are none');
  } finally {
    db.close();
  }
  const codes = Uint8Array.from(posts, feelingCode);
  let seed = 3;
  const r = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  for (let trial = 0; trial < 20; trial++) {
    const rows = Array.from({ length: 1 + Math.floor(r() * 30) }, () => Math.floor(r() * posts.length));
    assert.equal(sentimentOfCodes(codes, rows), narrativeSentiment(rows.map((i) => posts[i]!)), `trial ${trial}`);
  }
});

test('members most central first: by similarity descending, ties by position, as a comparator sort orders them', () => {
  let seed = 11;
  const r = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  const sim = Float32Array.from({ length: 5000 }, () => (r() < 0.2 ? 0.25 : r() * 2 - 1));
  sim.set([0, -0, 1, -1, 0.25], 0);
  const idx = Array.from({ length: 5000 }, (_, i) => i).filter(() => r() < 0.7);
  const want = [...idx].sort((a, b) => sim[b]! - sim[a]! || a - b);
  assert.equal(Array.from(mostCentralFirst(idx, sim)), want);
  assert.throws(() => mostCentralFirst([2 ** 21], new Float32Array(2 ** 21 + 1)), /past/);
});

test('row label keys: each row with a vector holds labelKeys of its terms as ids; the others none', () => {
  const docs = [
    ['ferry', 'strike', 'actually', 'ends', 'ferry', 'strike'],
    ['kombucha'],
    ['does', 'anyone', 'like', 'sourdough', 'starter'],
    ['ferry', 'strike'],
  ];
  const vocab = [...new Set(docs.flat())];
  const offsets = new Uint32Array(docs.length + 1);
  docs.forEach((d, i) => (offsets[i + 1] = offsets[i]! + d.length));
  const ids = Uint32Array.from(docs.flat(), (w) => vocab.indexOf(w));
  const has = Uint8Array.from([1, 1, 1, 0]);
  const keys = new RowLabelKeys({ vocab, offsets, ids }, has);
  docs.forEach((d, row) => {
    const got = Array.from(keys.ids.subarray(keys.offsets[row]!, keys.offsets[row + 1]!), (id) => keys.name(id));
    assert.equal(got, has[row] ? labelKeys(d) : [], `row ${row}`);
  });
  assert.ok(keys.size > vocab.length, 'bigrams are ids after the terms');
});

test('clustering: planted groups are found, stray points are noise', () => {
  const dim = 8;
  const groups = 5;
  const per = 60;
  const vecs: number[] = [];
  let seed = 9;
  const r = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31 - 0.5;
  for (let g = 0; g < groups; g++) {
    for (let i = 0; i < per; i++) {
      const v = Array.from({ length: dim }, (_, j) => (j === g ? 1 : 0) + 0.08 * r());
      const n = Math.hypot(...v);
      vecs.push(...v.map((x) => x / n));
    }
  }
  // Stray points along the last axes: less than 0.3 similar to any group.
  for (let i = 0; i < 6; i++) {
    const v = Array.from({ length: dim }, (_, j) => (j >= groups ? 1 : 0) + 0.3 * r());
    const n = Math.hypot(...v);
    vecs.push(...v.map((x) => x / n));
  }
  const vectors = Float32Array.from(vecs);
  const rows = Array.from({ length: vectors.length / dim }, (_, i) => i);
  const c = clusterWindow(vectors, dim, rows, { ...CLUSTER_DEFAULTS, kMin: 2, kMax: 12, minClusterSize: 10 });
  assert.is(c.kept.filter(Boolean).length, groups, 'the strays do not make a narrative');
  const truth = rows.map((i) => (i < groups * per ? `g${Math.floor(i / per)}` : 'noise'));
  const pred = Array.from(c.assignment, (a) => (a < 0 ? 'noise' : `c${a}`));
  assert.ok(nmi(truth, pred) > 0.95, `nmi ${nmi(truth, pred)}`);
  assert.ok(kGrid(4, 96).length > 10 && kGrid(4, 96)[0] === 4);
  assert.equal(Array.from(clusterWindow(vectors, dim, rows.slice(0, 3)).assignment), [-1, -1, -1], 'too few rows: all noise');
  // Warm start: the previous run's clusters, their centres recomputed from their members, are kept.
  const opts = { ...CLUSTER_DEFAULTS, kMin: 2, kMax: 12, minClusterSize: 10 };
  const prior = Array.from({ length: groups }, (_, g) => unitOf(vectorSum(vectors, dim, rows.slice(g * per, (g + 1) * per))));
  assert.ok(Math.abs(Math.hypot(...prior[0]!) - 1) < 1e-5 && prior[0]![0]! > 0.9, 'the centre of group 0 points along axis 0');
  const warm = clusterWindow(vectors, dim, rows, opts, prior);
  assert.ok(
    warm.warmStart && warm.kept.filter(Boolean).length === groups,
    'the previous clusters are kept; the strays are dissolved again',
  );
  assert.ok(
    nmi(
      truth,
      Array.from(warm.assignment, (a) => (a < 0 ? 'noise' : `c${a}`)),
    ) > 0.95,
  );
  for (let g = 0; g < groups; g++) assert.is(warm.assignment[g * per], g, 'cluster g is the previous cluster g');
});

test('bisecting refinement: a centre over two groups is split; one group is not', () => {
  const dim = 4;
  let seed = 5;
  const r = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31 - 0.5;
  const vecs: number[] = [];
  for (let g = 0; g < 3; g++) {
    for (let i = 0; i < 40; i++) {
      const v = Array.from({ length: dim }, (_, j) => (j === g ? 1 : 0) + 0.1 * r());
      const n = Math.hypot(...v);
      vecs.push(...v.map((x) => x / n));
    }
  }
  const points = Float32Array.from(vecs);
  const all = Array.from({ length: 120 }, (_, i) => i);
  const dist = distanceMatrix(points, dim, all);
  // Group 0 alone under one centre; groups 1 and 2 under the other.
  const start = {
    k: 2,
    silhouette: 0,
    centroids: [
      [1, 0, 0, 0],
      [0, Math.SQRT1_2, Math.SQRT1_2, 0],
    ],
  };
  const refined = splitWhileSilhouetteRises(points, dim, start, dist, all, 10, CLUSTER_DEFAULTS);
  assert.is(refined.k, 3, 'the merged pair is split, and nothing more');
  const nearestGroup = (c: number[]) => c.indexOf(Math.max(...c.slice(0, 3)));
  assert.equal(refined.centroids.map(nearestGroup).sort(), [0, 1, 2]);
  assert.is(
    splitWhileSilhouetteRises(points, dim, start, dist, all, 41, CLUSTER_DEFAULTS).k,
    2,
    'no split leaves a half under the minimum size',
  );
});

test(
  'kernel k-means (per-request path) draws the same k-means++ starts, ends in the same ' +
    'clusters as ml-kmeans, and gives the same silhouette and centroid cosines',
  () => {
    const dim = 16;
    const n = 90;
    let seed = 11;
    const r = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31 - 0.5;
    const points = new Float32Array(n * dim);
    for (let i = 0; i < n; i++) {
      const v = Array.from({ length: dim }, (_, j) => (j === i % 3 ? 1 : 0) + 0.4 * r());
      const norm = Math.hypot(...v);
      v.forEach((x, j) => (points[i * dim + j] = x / norm));
    }
    const idx = Array.from({ length: n }, (_, i) => i);
    // The Gram matrix as the per-request path takes it (int8-gram.ts, for int8 rows): here of the float points.
    const G = new Float64Array(n * n);
    for (let a = 0; a < n; a++)
      for (let b = 0; b < n; b++) {
        let dot = 0;
        for (let j = 0; j < dim; j++) dot += points[a * dim + j]! * points[b * dim + j]!;
        G[a * n + b] = dot;
      }
    const dist = distanceMatrix(points, dim, idx);
    for (const k of [2, 3, 5]) {
      const positions = seedPositions(G, n, k, 7 + k);
      const vectors = seedCentres(points, dim, idx, k, 7 + k);
      assert.equal(
        positions.map((p) => Array.from(points.subarray(p * dim, (p + 1) * dim))),
        vectors,
        `k ${k}: the same rows drawn`,
      );
      const viaGram = new KernelKMeans(G, n, positions);
      viaGram.iterate(50);
      const ml = kmeans(
        idx.map((i) => Array.from(points.subarray(i * dim, (i + 1) * dim))),
        k,
        { initialization: vectors, maxIterations: 50, tolerance: 0 },
      );
      assert.equal(Array.from(viaGram.clusters), ml.clusters, `k ${k}: the same clusters`);
      assert.ok(
        Math.abs(viaGram.silhouette() - silhouette(dist, viaGram.clusters, k)) < 1e-6,
        `k ${k}: the same silhouette (${viaGram.silhouette()} vs ${silhouette(dist, viaGram.clusters, k)}; the distance matrix is float32)`,
      );
      for (let c = 0; c < k; c++) {
        const centre = ml.centroids[c]!;
        const norm = Math.hypot(...centre);
        for (const i of [0, 17, 44]) {
          let dot = 0;
          for (let j = 0; j < dim; j++) dot += points[i * dim + j]! * centre[j]!;
          assert.ok(Math.abs(viaGram.cosineToCentroid(i, c) - dot / norm) < 1e-9, `k ${k}: cosine of row ${i} to centroid ${c}`);
        }
      }
    }
  },
);

test('tracking: matched by centroid or member overlap (rows), one-to-one', () => {
  const v = (...x: number[]) => Float32Array.from(x);
  // Rows: a=0, b=1, c=2, x=3, q=4, z=5.
  const prev = [
    { centroid: v(1, 0), members: [0, 1] },
    { centroid: v(0, 1), members: [2] },
  ];
  const cur = [
    { centroid: v(0, 1), members: [5] },
    { centroid: v(0.6, 0.8), members: [0, 1, 3] },
    { centroid: v(-1, 0), members: [4] },
  ];
  const m = matchClusters(cur, prev);
  assert.equal(
    m.map((x) => x?.previous ?? null),
    [1, 0, null],
  );
  assert.is(m[1]!.overlap, 1);
  assert.is(overlapCoefficient([0], []), 0);
  assert.is(overlapCoefficient([0, 1, 7], [7, 9]), 0.5);
  // Overlapping previous sides (not one clustering) are still counted right.
  const twice = matchClusters(
    [{ centroid: v(0, -1), members: [0, 1] }],
    [
      { centroid: v(1, 0), members: [0, 1] },
      { centroid: v(0, 1), members: [1, 2] },
    ],
  );
  assert.equal(twice, [{ previous: 0, cosine: 0, overlap: 1 }]);
});

test(
  'the stage on the sample: every field of a narrative (docs/api.md, "Narrative") with its ' +
    'type and range; keys kept on a re-run a day later; trajectory grows',
  async () => {
    const d = await pipedSampleDir();
    const rows = await readSnapshot(d, 'narratives', '*', 'ORDER BY window_key, id');
    assert.ok(rows.length > 0);
    for (const w of ['7d', '30d', '90d', 'all'])
      assert.ok(
        rows.some((r) => r.window_key === w),
        `narratives in ${w}`,
      );
    for (const r of rows) {
      for (const k of [
        'id',
        'label',
        'summary',
        'window_key',
        'window_start',
        'window_end',
        'computed_at',
        'total_engagement',
        'narrative_key',
      ])
        assert.type(r[k], 'string', k);
      assert.ok((r.summary as string).length > 0 && (r.label as string).length > 0);
      assert.ok(/^\d+$/.test(r.total_engagement as string));
      assert.ok(Number(r.content_count) >= 5 && Number(r.creator_count) >= 1 && Number(r.platform_count) >= 1);
      for (const k of ['momentum_score', 'emerging_score']) assert.ok((r[k] as number) >= 0 && (r[k] as number) <= 1, k);
      assert.ok(r.diffusion === null || ((r.diffusion as number) >= 0 && (r.diffusion as number) <= 1 + 1e-9));
      assert.ok(r.lifecycle === null || LIFECYCLES.includes(r.lifecycle as string));
      assert.ok(['high', 'medium', 'low'].includes(r.trajectory_confidence as string));
      assert.ok(r.sentiment_score === null || Math.abs(r.sentiment_score as number) <= 1);
      assert.ok((r.flagged_share as number) >= 0 && (r.flagged_share as number) <= 1, 'flagged_share');
      const sb = JSON.parse(r.score_breakdown as string);
      assert.equal(
        [sb.content_count, sb.creator_count, sb.platform_count],
        [Number(r.content_count), Number(r.creator_count), Number(r.platform_count)],
      );
      assert.is(sb.total_engagement, Number(r.total_engagement));
      const st = JSON.parse(r.sentiment_breakdown as string);
      if (st.stance) assert.ok(Math.abs(st.stance.critical + st.stance.mixed + st.stance.neutral + st.stance.supportive - 1) < 1e-9);
      assert.ok(Array.isArray(r.top_tags));
    }
    // Members: each post at most once per window; counts agree.
    const members = await readSnapshot(d, 'narrative-members', 'narrative_id, window_key, uuid');
    for (const w of ['7d', '30d', '90d', 'all']) {
      const ws = members.filter((m) => m.window_key === w).map((m) => m.uuid);
      assert.is(new Set(ws).size, ws.length, `one narrative per post in ${w}`);
    }
    for (const r of rows) {
      const own = members.filter((m) => m.narrative_id === r.id).map((m) => m.uuid);
      assert.is(own.length, Number(r.content_count));
      const central = new Set(r.central_content_uuids as string[]);
      assert.ok(central.size > 0 && central.size === (r.central_content_uuids as string[]).length && central.size <= 10, `${r.label}`);
      assert.is(own.filter((u) => central.has(u as string)).length, central.size, `${r.label}: its central posts (at most 10) are members`);
    }
    // The representative is a readable member and the summary is cut from it (docs/fields.md, "summary").
    const posts = new Map((await readSnapshot(d, 'posts', 'uuid, title, description')).map((p) => [p.uuid as string, p]));
    let represented = 0;
    for (const r of rows) {
      if (r.representative_content_uuid === null) continue;
      represented++;
      const own = members.filter((m) => m.narrative_id === r.id).map((m) => m.uuid);
      assert.ok(own.includes(r.representative_content_uuid), `${r.label}: the representative is a member`);
      const p = posts.get(r.representative_content_uuid as string)!;
      const text = [p.title, p.description].filter(Boolean).join('. ');
      assert.ok(postReadable(text), `${r.label}: readable representative "${text}"`);
      assert.is(r.summary, summarise(cleanForSummary(text)), `${r.label}: the summary is the representative's text`);
    }
    assert.ok(represented >= rows.length * 0.9, `${represented} of ${rows.length} narratives have a representative`);
    // The text index over labels and summaries finds a narrative by the words of its label.
    const ordered = await readSnapshot(d, 'narratives', 'id, label', 'ORDER BY row_id');
    const index = await loadBm25(path.join(generationDir(dataDirLayout(d), (await readCurrent(dataDirLayout(d)))!), 'narrative-text.bin'));
    for (const n of ordered.slice(0, 5)) {
      const hits = searchBm25(index, terms(n.label as string), 50);
      assert.ok(
        hits.some((h) => ordered[h.row]!.id === n.id),
        `"${n.label}" finds its narrative`,
      );
    }

    // The next day, same posts: the stories continue under the same keys.
    const next = new Date(AS_OF.getTime() + DAY_MS);
    await runPipeline(d, ['run'], next);
    const again = await readSnapshot(d, 'narratives', 'id, narrative_key, window_key, previous_id');
    const allBefore = new Set(rows.filter((r) => r.window_key === 'all').map((r) => r.narrative_key));
    const allAfter = again.filter((r) => r.window_key === 'all');
    const kept = allAfter.filter((r) => allBefore.has(r.narrative_key as string)).length;
    assert.ok(kept / allAfter.length >= 0.9, `${kept}/${allAfter.length} keys kept`);
    assert.not.ok(
      again.some((r) => rows.some((p) => p.id === r.id)),
      'ids name a narrative in one generation',
    );
    const traj = await readSnapshot(d, 'narrative-trajectory', 'narrative_key, generation, as_of');
    const key = allAfter.find((r) => allBefore.has(r.narrative_key as string))!.narrative_key;
    const hist = traj.filter((t) => t.narrative_key === key);
    assert.equal(
      hist.map((h) => h.generation),
      ['g000001', null],
    );
  },
);

test('a corpus too small for narratives publishes empty tables with their columns', async () => {
  const d = tmpDir();
  fs.mkdirSync(path.join(d, 'landing'), { recursive: true });
  const posts = Array.from({ length: 4 }, (_, i) =>
    JSON.stringify({
      uuid: `p${i}`,
      platform: 'x',
      published_at: '2026-10-30T10:00:00Z',
      title: `lonely post number ${i} about gardening`,
    }),
  );
  fs.writeFileSync(path.join(d, 'landing', 'few.ndjson'), posts.join('\n') + '\n');
  await runPipeline(d);
  assert.equal(await readSnapshot(d, 'narratives'), []);
  assert.equal(await readSnapshot(d, 'narrative-members'), []);
});

test.after.each(cleanupTmp);
test.run();
