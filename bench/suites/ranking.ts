// `npm run bench -- ranking --posts N [--queries Q]`: the ranking core on a generated corpus of N
// posts (media off): build time and index bytes (from the pipeline run), p50/p99 latency and
// single-thread QPS of search(limit 100) across windows, HNSW recall@10 against exact search
// (hnswlib's BruteforceSearch), and in the same run two peers on the same rows, queries and windows:
// the exact brute-force hybrid (same BM25, exact vector scan, same fusion), and LanceDB's hybrid
// search (its FTS + IVF_PQ vector index, RRF k 60), run as a child process from bench/peers/
// (installed on demand; see bench/peer-install.ts and bench/peers/lancedb-peer.mjs).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import hnswlib from 'hnswlib-node';
import { terms } from '../../core/text/analyzer.ts';
import { searchSegments } from '../../core/ranking/bm25.ts';
import { loadConfig } from '../../core/infra/config.ts';
import { dataDirLayout } from '../../core/infra/data-dir.ts';
import { openDuckDB, sqlString } from '../../core/infra/duckdb.ts';
import { generationDir, readCurrent, readManifest, type Manifest } from '../../core/snapshots/generations.ts';
import { createLogger } from '../../core/infra/log.ts';
import { queryVector, RANKING, search, vectorEf } from '../../core/ranking/search.ts';
import { searchGraphs } from '../../core/ranking/segment-graphs.ts';
import { loadSearchIndex, type SearchIndex } from '../../core/ranking/search-index.ts';
import { segmentDir } from '../../core/snapshots/segments.ts';
import { WINDOW_KEYS, type WindowKey } from '../../core/snapshots/windows.ts';
import { generateCorpus } from '../../fixtures/generate.ts';
import { postText } from '../../pipeline/features/text-analysis.ts';
import { resolveStages, runStages } from '../../pipeline/run/runner.ts';
import { ensurePeerInstalled, runPeerScript } from '../peer-install.ts';
import { runStamp, writeResultsJson, writeResultsSection } from '../results-file.ts';
import { hasCurrentLayout } from '../lib/cached-generation.ts';

interface RankingBenchOptions {
  posts: number;
  queries: number;
  command: string;
}

const AS_OF = '2026-11-01T00:00:00.000Z';
const ROOT = path.resolve(import.meta.dirname, '..', '..');

async function publishedCorpus(
  posts: number,
): Promise<{ dataDir: string; stageMs: Record<string, number>; truthFile: string; builtAt: string }> {
  const dataDir = path.join(ROOT, 'bench', '.cache', `ranking-${posts}`);
  const truthFile = path.join(ROOT, 'bench', '.cache', `ranking-${posts}.truth.ndjson`);
  const meta = path.join(dataDir, 'bench-build.json');
  if (!fs.existsSync(meta) || !hasCurrentLayout(dataDir)) {
    fs.rmSync(dataDir, { recursive: true, force: true });
    process.stderr.write(`generating ${posts} posts and running the pipeline into ${dataDir} ...\n`);
    await generateCorpus({ posts, outDir: path.join(dataDir, 'landing', 'corpus'), truthFile, seed: 42, asOf: AS_OF, media: false });
    const config = loadConfig({ ...process.env, DATA_DIR: dataDir, LOG_LEVEL: 'silent' });
    const run = await runStages(resolveStages(['run']), {
      config,
      log: createLogger('bench', 'silent'),
      asOf: new Date(AS_OF),
      tty: false,
    });
    fs.writeFileSync(
      meta,
      JSON.stringify({ builtAt: new Date().toISOString(), stageMs: Object.fromEntries(run.stages.map((s) => [s.stage, s.ms])) }),
    );
  }
  const m = JSON.parse(fs.readFileSync(meta, 'utf8')) as { stageMs: Record<string, number>; builtAt?: string };
  // The build is cached: its timings are those of the run that made it, by the code of that day.
  const builtAt = m.builtAt ?? fs.statSync(meta).mtime.toISOString();
  return { dataDir, truthFile, stageMs: m.stageMs, builtAt };
}

export interface LabelledQuery {
  text: string;
  narrative: string;
}

const QUERY_FORMS = 4;

/**
 * The window of the i-th query. Queries come four per narrative (one per form), so the window
 * turns once per narrative: every form meets every window, instead of each form always meeting
 * the same one.
 */
export function windowOf(i: number): WindowKey {
  return WINDOW_KEYS[Math.floor(i / QUERY_FORMS) % WINDOW_KEYS.length]!;
}

/** Queries users would type: each narrative's keywords in a few combinations, plus its hashtags. */
export function queriesFrom(truthFile: string, n: number): LabelledQuery[] {
  const out: LabelledQuery[] = [];
  for (const line of fs.readFileSync(truthFile, 'utf8').split('\n')) {
    if (!line.includes('"type":"narrative"')) continue;
    const t = JSON.parse(line) as { id: string; keywords: string[]; hashtags: string[] };
    const forms = [
      t.keywords.slice(0, 2).join(' '),
      t.keywords.slice(2, 5).join(' '),
      `#${t.hashtags[0]}`,
      `${t.keywords[5] ?? t.keywords[0]} news`,
    ];
    for (const text of forms) out.push({ text, narrative: t.id });
  }
  return Array.from({ length: n }, (_, i) => out[i % out.length]!);
}

/** Planted narrative of every row (by uuid), from the ground truth. */
function membership(truthFile: string): Map<string, string> {
  const m = new Map<string, string>();
  for (const line of fs.readFileSync(truthFile, 'utf8').split('\n')) {
    if (!line.includes('"type":"post"')) continue;
    const t = JSON.parse(line) as { uuid: string; narrative: string | null };
    if (t.narrative) m.set(t.uuid, t.narrative);
  }
  return m;
}

/** The peer: same BM25, exact vector scan of the window (the float32 vectors of the snapshot), same RRF. */
function bruteForce(index: SearchIndex, floats: Float32Array, query: string, limit: number, window: WindowKey): number[] {
  const start = index.windowStart[window];
  const q = terms(query);
  const depth = Math.max(limit * 2, 100);
  const lex = searchSegments(index.bm25, q, depth, start, index.deleted);
  const qv = queryVector(index, q);
  const dim = qv.length;
  const sims: Array<{ row: number; s: number }> = [];
  for (let r = start; r < index.rows; r++) {
    let s = 0;
    for (let c = 0; c < dim; c++) s += qv[c]! * floats[r * dim + c]!;
    if (s >= 0.35) sims.push({ row: r, s });
  }
  sims.sort((a, b) => b.s - a.s || a.row - b.row);
  const score = new Map<number, number>();
  lex.forEach((x, i) => score.set(x.row, (score.get(x.row) ?? 0) + 1 / (RANKING.rrfK + i + 1)));
  sims.slice(0, depth).forEach((x, i) => score.set(x.row, (score.get(x.row) ?? 0) + 1 / (RANKING.rrfK + i + 1)));
  return [...score]
    .sort((a, b) => b[1] - a[1] || a[0] - b[0])
    .slice(0, limit)
    .map(([r]) => r);
}

/** What a system returns for a query in a window: uuids, best first. */
type Retriever = (q: LabelledQuery, window: WindowKey) => string[];

interface Relevance {
  ndcgAt10: number;
  recallAt100: number;
  queries: number;
}

/**
 * Relevance on the planted truth (window all): nDCG@10 (binary gain: the post belongs to the
 * query's narrative) and recall@100 (share of the narrative's posts in the top 100, capped).
 */
function relevance(distinct: LabelledQuery[], retrieve: Retriever, member: Map<string, string>, size: Map<string, number>): Relevance {
  let ndcg = 0;
  let recall100 = 0;
  for (const q of distinct) {
    const uuids = retrieve(q, 'all').slice(0, 100);
    const rel = uuids.map((u) => (member.get(u) === q.narrative ? 1 : 0));
    const dcg = rel.slice(0, 10).reduce((acc: number, g, i) => acc + g / Math.log2(i + 2), 0);
    const ideal = Array.from({ length: Math.min(10, size.get(q.narrative) ?? 0) }, (_, i) => 1 / Math.log2(i + 2)).reduce(
      (x, y) => x + y,
      0,
    );
    ndcg += ideal ? dcg / ideal : 0;
    recall100 += rel.reduce((x: number, y) => x + y, 0) / Math.max(1, Math.min(100, size.get(q.narrative) ?? 0));
  }
  return { ndcgAt10: ndcg / distinct.length, recallAt100: recall100 / distinct.length, queries: distinct.length };
}

interface PeerQuery {
  text: string;
  whereMs: number | null;
  vector: number[] | null;
}

/** What bench/peers/lancedb-peer.mjs writes to result.json. */
interface LanceDbResult {
  name: string;
  version: string;
  index: { vector: string; distance: string };
  build: { tableMs: number; ftsMs: number; btreeMs: number; vectorMs: number; totalMs: number };
  bytes: number;
  latenciesMs: number[];
  cpuMsPerQuery: number;
  ids: number[][];
  qualityIds: number[][];
  vectorRecallAt10: number | null;
  /** Set by the parent: timed queries without a vector part (LanceDB ran FTS alone). */
  ftsOnlyQueries: number;
}

/**
 * LanceDB on this generation, in a child process: the rows (our row number, the text our analyzer
 * indexed, published_at in ms) and the generation's text vectors go in through files in a temp dir,
 * with each query's text, its window as a published_at lower bound, and its query vector (the same
 * embedding of the same known terms as ours; null when it is zero: then LanceDB runs FTS alone).
 */
async function runLanceDb(
  index: SearchIndex,
  dir: string,
  manifest: Manifest,
  timed: Array<{ q: LabelledQuery; window: WindowKey }>,
  quality: LabelledQuery[],
): Promise<LanceDbResult> {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-lancedb-'));
  try {
    // Row texts exactly as the features stage built them (postText), in generation row order.
    const rowsFile = path.join(tmp, 'rows.ndjson');
    const out = await fs.promises.open(rowsFile, 'w');
    const db = await openDuckDB();
    let n = 0;
    try {
      const result = await db.conn.stream(
        `SELECT uuid, title, description, tags FROM read_parquet(${sqlString(path.join(dir, 'posts.parquet'))}) ORDER BY row_id`,
      );
      for await (const chunk of result.yieldRowObjectJson()) {
        let lines = '';
        for (const r of chunk as Array<{ uuid: string; title: string | null; description: string | null; tags: string[] | null }>) {
          if (r.uuid !== index.uuid.get(n))
            throw new Error(`posts.parquet row ${n} is ${r.uuid}, the search index has ${index.uuid.get(n)}`);
          lines +=
            JSON.stringify({
              id: n,
              text: postText({ title: r.title, description: r.description, tags: r.tags ?? [] }),
              published_at: index.publishedAt[n],
            }) + '\n';
          n++;
        }
        await out.write(lines);
      }
    } finally {
      db.close();
      await out.close();
    }
    if (n !== index.rows) throw new Error(`posts.parquet has ${n} rows, the search index ${index.rows}`);
    // The generation's text vectors laid end to end in row order (each segment holds its own).
    const vectorsFile = path.join(tmp, 'text-vectors.f32');
    fs.writeFileSync(
      vectorsFile,
      Buffer.concat(index.segments.map((s) => fs.readFileSync(path.join(segmentDir(dir, s.id), 'text-vectors.f32')))),
    );
    const peerQuery = (text: string, window: WindowKey): PeerQuery => {
      const qv = queryVector(index, terms(text));
      // The window as LanceDB sees it: published_at >= its start (rows are sorted by published_at,
      // so that is exactly rows [windowStart, rows)); no filter when the window holds every row, as in ours.
      const whereMs = index.windowStart[window] > 0 ? Date.parse(manifest.windows[window].start) : null;
      return { text, whereMs, vector: qv.some((x) => x !== 0) ? Array.from(qv) : null };
    };
    const queries = timed.map(({ q, window }) => peerQuery(q.text, window));
    fs.writeFileSync(
      path.join(tmp, 'input.json'),
      JSON.stringify({
        rows: index.rows,
        dim: index.embedder.params.dim,
        rowsFile,
        vectorsFile,
        dbDir: path.join(tmp, 'lancedb'),
        warmup: 20,
        limit: 100,
        rrfK: RANKING.rrfK,
        queries,
        quality: quality.map((q) => peerQuery(q.text, 'all')),
      }),
    );
    process.stderr.write(`running LanceDB on ${index.rows} rows (bench/peers/lancedb-peer.mjs, temp dir ${tmp}) ...\n`);
    // LANCEDB_LOG=error: LanceDB warns on every query that selects only the id (a deprecation
    // notice about its score columns); set LANCEDB_LOG to see its warnings.
    await runPeerScript('lancedb-peer.mjs', [tmp], { LANCEDB_LOG: process.env.LANCEDB_LOG ?? 'error' });
    const result = JSON.parse(fs.readFileSync(path.join(tmp, 'result.json'), 'utf8')) as Omit<LanceDbResult, 'ftsOnlyQueries'>;
    if (result.ids.length !== timed.length || result.qualityIds.length !== quality.length)
      throw new Error('LanceDB peer: result does not match its queries');
    return { ...result, ftsOnlyQueries: queries.filter((q) => !q.vector).length };
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

function pct(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
}

/** Bytes of what search loads: each segment's BM25, text graph and vectors, the embedder and its space. */
function searchIndexBytes(manifest: Manifest): number {
  return manifest.files
    .filter(
      (f) =>
        ['embedder.bin', 'text-space.json', 'text-space.f32', 'deleted-rows.u32'].includes(f.name) ||
        /^segments\/[^/]+\/(bm25\.bin|text\.hnsw|text-vectors\.f32)$/.test(f.name),
    )
    .reduce((a, f) => a + f.bytes, 0);
}

/** The timed passes: ours and the exact peer on the same queries and windows (after a warm-up). */
function timedPasses(index: SearchIndex, floats: Float32Array, queries: readonly LabelledQuery[]) {
  for (const q of queries.slice(0, 20)) search(index, { query: q.text, limit: 100, window: '30d' });
  const ours: number[] = [];
  const peer: number[] = [];
  const oursRows: Array<Set<number>> = [];
  const timed: Array<{ q: LabelledQuery; window: WindowKey }> = [];
  let overlap = 0;
  for (const [i, q] of queries.entries()) {
    const window = windowOf(i);
    timed.push({ q, window });
    let t = performance.now();
    const a = search(index, { query: q.text, limit: 100, window });
    ours.push(performance.now() - t);
    oursRows.push(new Set(a.map((r) => r.row)));
    t = performance.now();
    const b = bruteForce(index, floats, q.text, 100, window);
    peer.push(performance.now() - t);
    // Same candidates? (orderings differ by design: ours blends in recency and engagement)
    const exactSet = new Set(b);
    overlap += b.length ? a.filter((r) => exactSet.has(r.row)).length / b.length : 1;
  }
  return { ours, peer, oursRows, timed, overlap };
}

/** Each planted narrative's row count in the index. */
function narrativeSizes(index: SearchIndex, member: ReadonlyMap<string, string>): Map<string, number> {
  const size = new Map<string, number>();
  for (let row = 0; row < index.rows; row++) {
    const n = member.get(index.uuid.get(row)!);
    if (n) size.set(n, (size.get(n) ?? 0) + 1);
  }
  return size;
}

/**
 * Share of LanceDB's top 100 that ours returns too, per query, averaged; and a check that its
 * prefilter held (every row it returned is in the query's window).
 */
function lanceOverlapWithOurs(
  index: SearchIndex,
  lance: LanceDbResult,
  timed: ReadonlyArray<{ q: LabelledQuery; window: WindowKey }>,
  oursRows: ReadonlyArray<Set<number>>,
): number {
  let lanceOverlap = 0;
  lance.ids.forEach((ids, i) => {
    const start = index.windowStart[timed[i]!.window];
    const outside = ids.find((r) => !(r >= start && r < index.rows));
    if (outside !== undefined)
      throw new Error(
        `LanceDB returned row ${outside} for "${timed[i]!.q.text}", outside window ${timed[i]!.window} (rows ${start}..${index.rows - 1})`,
      );
    lanceOverlap += ids.length ? ids.filter((r) => oursRows[i]!.has(r)).length / ids.length : 1;
  });
  return lanceOverlap;
}

/**
 * HNSW recall@10 against exact inner-product search, on the query embeddings: at ef 100 and at
 * the ef the ranking core uses for limit 100 (its vector list is 200 deep), each query in its
 * window (the shards overlapping it, filtered where partly inside), as search() does.
 */
function hnswRecall(index: SearchIndex, floats: Float32Array, queries: readonly LabelledQuery[]) {
  const dim = index.embedder.params.dim;
  const exact = new hnswlib.BruteforceSearch('ip', dim);
  exact.initIndex(index.rows);
  for (let r = 0; r < index.rows; r++) {
    const v = floats.subarray(r * dim, (r + 1) * dim);
    if (v.some((x) => x !== 0)) exact.addPoint(Array.from(v), r);
  }
  const recallAt = (ef: number) => {
    let hit = 0;
    let total = 0;
    for (const [i, q] of queries.entries()) {
      const start = index.windowStart[windowOf(i)];
      const qv = queryVector(index, terms(q.text));
      if (!qv.some((x) => x !== 0) || index.rows - start < 10) continue;
      const truth = new Set(exact.searchKnn(Array.from(qv), 10, (r: number) => r >= start).neighbors);
      hit += searchGraphs(index.hnsw!, qv, 10, ef, start).filter((n) => truth.has(n.row)).length;
      total += truth.size;
    }
    return total ? hit / total : 0;
  };
  const coreEf = vectorEf(200);
  const recallEf100 = recallAt(100);
  const recall = recallAt(coreEf);
  return { coreEf, recallEf100, recall };
}

const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);

/** The LanceDB peer's figures for the results file. */
function lanceFigures(lance: LanceDbResult, lanceQuality: Relevance, lanceOverlap: number) {
  return {
    name: `LanceDB ${lance.version}`,
    index: lance.index,
    p50: pct(lance.latenciesMs, 50),
    p99: pct(lance.latenciesMs, 99),
    qps: lance.latenciesMs.length / (sum(lance.latenciesMs) / 1000),
    cpuMsPerQuery: lance.cpuMsPerQuery,
    coresBusy: lance.cpuMsPerQuery / (sum(lance.latenciesMs) / Math.max(1, lance.latenciesMs.length)),
    build: lance.build,
    bytes: lance.bytes,
    quality: lanceQuality,
    vectorRecallAt10: lance.vectorRecallAt10,
    top100SharedWithOurs: lanceOverlap / Math.max(1, lance.ids.length),
    ftsOnlyQueries: lance.ftsOnlyQueries,
  };
}

type RankingResult = {
  date: string;
  machine: string;
  command: string;
  posts: number;
  queries: number;
  build: { featuresMs?: number; indexMs?: number; indexBytes: number };
  loadMs: number;
  ours: { p50: number; p99: number; qps: number };
  peer: { p50: number; p99: number; qps: number };
  top100OverlapWithExact: number;
  hnswRecallAt10: number;
  hnswEf: number;
  hnswRecallAt10Ef100: number;
  quality: Relevance;
  lancedb: ReturnType<typeof lanceFigures>;
};

/** The RESULTS.md section of a run. */
function rankingReport(o: RankingBenchOptions, result: RankingResult, builtAt: string): string {
  const f = (n: number, d = 1) => n.toFixed(d);
  const L = result.lancedb;
  const { queries, quality, loadMs } = result;
  const { featuresMs, indexMs, indexBytes } = result.build;
  const recall = result.hnswRecallAt10;
  const recallEf100 = result.hnswRecallAt10Ef100;
  const coreEf = result.hnswEf;
  return `## Ranking core at ${o.posts.toLocaleString('en-US')} posts (limit 100)

Command: \`${o.command}\` — ${result.date.slice(0, 10)}, ${result.machine}; ${queries} queries (four forms per narrative: two keyword combinations, a hashtag, "<keyword> news"), the window turning once per narrative so every form meets every window, one thread.

| | p50 | p99 | QPS (1 thread) |
|---|---|---|---|
| ours: BM25 + HNSW, RRF, blend | ${f(result.ours.p50, 2)} ms | ${f(result.ours.p99, 2)} ms | ${f(result.ours.qps, 0)} |
| peer: exact brute-force hybrid (same BM25, exact vector scan) | ${f(result.peer.p50, 2)} ms | ${f(result.peer.p99, 2)} ms | ${f(result.peer.qps, 0)} |
| peer: ${L.name} hybrid (FTS + IVF_PQ, RRF k 60, window prefilter) | ${f(L.p50, 2)} ms | ${f(L.p99, 2)} ms | ${f(L.qps, 0)} (1 caller) |

p50 ratio exact hybrid/ours ${f(result.peer.p50 / result.ours.p50, 1)}x. HNSW recall@10 against exact search (hnswlib BruteforceSearch): **${f(recall, 3)}** at ef ${coreEf}, the ef the ranking core uses for limit 100 (${f(recallEf100, 3)} at ef 100). Relevance against the planted narratives (${quality.queries} distinct queries, window all): nDCG@10 **${f(quality.ndcgAt10, 3)}**, recall@100 **${f(quality.recallAt100, 3)}**. Share of the exact hybrid's top 100 that ours returns too: ${f(result.top100OverlapWithExact, 3)} (the orders differ by design: ours blends recency and engagement in). Build (pipeline stages of the cached build made ${builtAt.slice(0, 16).replace('T', ' ')} UTC; delete bench/.cache/ranking-${o.posts} to rebuild): features ${f((featuresMs ?? 0) / 1000)} s, index ${f((indexMs ?? 0) / 1000)} s; index files ${f(indexBytes / 2 ** 20)} MiB; load ${f(loadMs / 1000, 2)} s.

${L.name} as a peer in the same run, in a child process (\`bench/peers/lancedb-peer.mjs\`, installed on demand from bench/peers' lockfile) on the same rows (the text our analyzer indexed, published_at, our text vectors) with the same queries, windows and query vectors: its hybrid search, full-text search + IVF_PQ vector search (cosine; LanceDB's default partitions, sub-vectors and nprobes, no refine step) fused by its RRF reranker (k 60), \`published_at >= window start\` as a prefilter (BTREE-indexed; none for window all, as in ours), limit 100; ${L.ftsOnlyQueries ? `FTS alone for the ${L.ftsOnlyQueries} queries without a vector part` : 'every query had a vector part'}. Its QPS is one caller issuing queries in sequence, but LanceDB spreads a query over threads: ${f(L.cpuMsPerQuery, 2)} ms of CPU per query, ${f(L.coresBusy, 1)} cores busy on average, where ours and the exact hybrid run on one thread. p50 ratio LanceDB/ours ${f(L.p50 / result.ours.p50, 1)}x.

| | build | on disk | nDCG@10 | recall@100 | vector index recall@10 vs exact |
|---|---|---|---|---|---|
| ours | index stage ${f((indexMs ?? 0) / 1000)} s (after features ${f((featuresMs ?? 0) / 1000)} s: analysis and embeddings) | ${f(indexBytes / 2 ** 20)} MiB (BM25, HNSW, vectors, embedder) | ${f(quality.ndcgAt10, 3)} | ${f(quality.recallAt100, 3)} | ${f(recall, 3)} (HNSW, ef ${coreEf}) |
| ${L.name} | ${f(L.build.totalMs / 1000)} s (table ${f(L.build.tableMs / 1000)}, FTS ${f(L.build.ftsMs / 1000)}, BTREE ${f(L.build.btreeMs / 1000)}, IVF_PQ ${f(L.build.vectorMs / 1000)}), given our vectors | ${f(L.bytes / 2 ** 20)} MiB (table with text and vectors, three indexes) | ${f(L.quality.ndcgAt10, 3)} | ${f(L.quality.recallAt100, 3)} | ${L.vectorRecallAt10 === null ? 'n/a' : f(L.vectorRecallAt10, 3)} (IVF_PQ vs its exact scan) |

Relevance of both by the same code (${quality.queries} distinct queries, window all). Share of LanceDB's top 100 that ours returns too: ${f(L.top100SharedWithOurs, 3)}.`;
}

export async function benchRanking(o: RankingBenchOptions): Promise<void> {
  // Before anything long: the LanceDB peer must be installable (bench/peers, on demand).
  ensurePeerInstalled('@lancedb/lancedb');
  const { dataDir, stageMs, truthFile, builtAt } = await publishedCorpus(o.posts);
  const layout = dataDirLayout(dataDir);
  const gen = (await readCurrent(layout))!;
  const dir = generationDir(layout, gen);
  const manifest = await readManifest(layout, gen);
  const indexBytes = searchIndexBytes(manifest);
  const t0 = performance.now();
  const index = await loadSearchIndex(dir);
  // The exact peers read the snapshot's float32 vectors (the index holds them int8-quantised for fusion).
  const rawFloats = Buffer.concat(index.segments.map((s) => fs.readFileSync(path.join(segmentDir(dir, s.id), 'text-vectors.f32'))));
  const floats = new Float32Array(rawFloats.buffer, rawFloats.byteOffset, rawFloats.byteLength / 4);
  const loadMs = performance.now() - t0;
  const queries = queriesFrom(truthFile, o.queries);
  const { ours, peer, oursRows, timed, overlap } = timedPasses(index, floats, queries);

  // Relevance on the planted truth (window all), ours and LanceDB's by the same code.
  const member = membership(truthFile);
  const size = narrativeSizes(index, member);
  const distinct = [...new Map(queries.map((q) => [q.text, q])).values()];
  const quality = relevance(distinct, (q, window) => search(index, { query: q.text, limit: 100, window }).map((r) => r.uuid), member, size);

  // LanceDB, same rows, queries and windows (the parent waits idle while the child runs).
  const lance = await runLanceDb(index, dir, manifest, timed, distinct);
  const lanceByText = new Map(distinct.map((q, i) => [q.text, lance.qualityIds[i] ?? []]));
  const lanceQuality = relevance(distinct, (q) => (lanceByText.get(q.text) ?? []).map((r) => index.uuid.get(r)!), member, size);
  const lanceOverlap = lanceOverlapWithOurs(index, lance, timed, oursRows);
  const { coreEf, recallEf100, recall } = hnswRecall(index, floats, queries);
  const result = {
    ...runStamp(o.command),
    posts: o.posts,
    rows: index.rows,
    queries: queries.length,
    build: { featuresMs: stageMs.features, indexMs: stageMs.index, indexBytes },
    loadMs,
    ours: { p50: pct(ours, 50), p99: pct(ours, 99), qps: queries.length / (sum(ours) / 1000) },
    peer: { name: 'exact brute-force hybrid', p50: pct(peer, 50), p99: pct(peer, 99), qps: queries.length / (sum(peer) / 1000) },
    top100OverlapWithExact: overlap / queries.length,
    hnswRecallAt10: recall,
    hnswEf: coreEf,
    hnswRecallAt10Ef100: recallEf100,
    quality,
    lancedb: lanceFigures(lance, lanceQuality, lanceOverlap),
  };
  writeResultsJson(`ranking-${o.posts}`, result);
  const md = rankingReport(o, result, builtAt);
  writeResultsSection(`ranking-${o.posts}`, md);
  process.stdout.write(md + '\n');
}
