// `npm run bench -- ranking --posts N [--queries Q]`: the ranking core on a generated corpus of N
// posts (media off): build time and index bytes (from the pipeline run), p50/p99 latency and
// single-thread QPS of search(limit 100) across windows, HNSW recall@10 against exact search
// (hnswlib's BruteforceSearch), and in the same run the exact brute-force hybrid (same BM25, exact
// vector scan, same fusion) as the peer.
import fs from 'node:fs';
import path from 'node:path';
import hnswlib from 'hnswlib-node';
import { terms } from '../../core/analyzer.ts';
import { searchBm25 } from '../../core/bm25.ts';
import { loadConfig } from '../../core/config.ts';
import { dataDirLayout } from '../../core/data-dir.ts';
import { embed } from '../../core/embedder.ts';
import { generationDir, readCurrent, readManifest } from '../../core/generations.ts';
import { createLogger } from '../../core/log.ts';
import { RRF_K, search } from '../../core/ranking/search.ts';
import { loadSearchIndex, type SearchIndex } from '../../core/ranking/search-index.ts';
import { WINDOW_KEYS, type WindowKey } from '../../core/windows.ts';
import { generateCorpus } from '../../fixtures/generate.ts';
import { resolveStages, runStages } from '../../pipeline/runner.ts';
import { machine, median, writeResultsJson, writeResultsSection } from '../results-file.ts';

export interface RankingBenchOptions { posts: number; queries: number; command: string }

const AS_OF = '2026-11-01T00:00:00.000Z';
const ROOT = path.resolve(import.meta.dirname, '..', '..');

async function publishedCorpus(posts: number): Promise<{ dataDir: string; stageMs: Record<string, number>; truthFile: string; builtAt: string }> {
  const dataDir = path.join(ROOT, 'bench', '.cache', `ranking-${posts}`);
  const truthFile = path.join(ROOT, 'bench', '.cache', `ranking-${posts}.truth.ndjson`);
  const meta = path.join(dataDir, 'bench-build.json');
  if (!fs.existsSync(meta)) {
    fs.rmSync(dataDir, { recursive: true, force: true });
    process.stderr.write(`generating ${posts} posts and running the pipeline into ${dataDir} ...\n`);
    await generateCorpus({ posts, outDir: path.join(dataDir, 'landing', 'corpus'), truthFile, seed: 42, asOf: AS_OF, media: false });
    const config = loadConfig({ ...process.env, DATA_DIR: dataDir, LOG_LEVEL: 'silent' });
    const run = await runStages(resolveStages(['run']), { config, log: createLogger('bench', 'silent'), asOf: new Date(AS_OF), tty: false });
    fs.writeFileSync(meta, JSON.stringify({ builtAt: new Date().toISOString(), stageMs: Object.fromEntries(run.stages.map((s) => [s.stage, s.ms])) }));
  }
  const m = JSON.parse(fs.readFileSync(meta, 'utf8')) as { stageMs: Record<string, number>; builtAt?: string };
  // The build is cached: its timings are those of the run that made it, by the code of that day.
  const builtAt = m.builtAt ?? fs.statSync(meta).mtime.toISOString();
  return { dataDir, truthFile, stageMs: m.stageMs, builtAt };
}

interface LabelledQuery { text: string; narrative: string }

/** Queries users would type: each narrative's keywords in a few combinations, plus its hashtags. */
function queriesFrom(truthFile: string, n: number): LabelledQuery[] {
  const out: LabelledQuery[] = [];
  for (const line of fs.readFileSync(truthFile, 'utf8').split('\n')) {
    if (!line.includes('"type":"narrative"')) continue;
    const t = JSON.parse(line) as { id: string; keywords: string[]; hashtags: string[] };
    for (const text of [t.keywords.slice(0, 2).join(' '), t.keywords.slice(2, 5).join(' '), `#${t.hashtags[0]}`, `${t.keywords[5] ?? t.keywords[0]} news`]) {
      out.push({ text, narrative: t.id });
    }
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

/** The peer: same BM25, exact vector scan of the window, same RRF. */
function bruteForce(index: SearchIndex, query: string, limit: number, window: WindowKey): number[] {
  const start = index.windowStart[window];
  const q = terms(query);
  const depth = Math.max(limit * 2, 100);
  const lex = searchBm25(index.bm25, q, depth, (r) => r >= start);
  const qv = embed(index.embedder, q.filter((t) => index.bm25.vocab.has(t)));
  const dim = qv.length;
  const sims: Array<{ row: number; s: number }> = [];
  for (let r = start; r < index.rows; r++) {
    let s = 0;
    for (let c = 0; c < dim; c++) s += qv[c]! * index.vectors[r * dim + c]!;
    if (s >= 0.35) sims.push({ row: r, s });
  }
  sims.sort((a, b) => b.s - a.s || a.row - b.row);
  const score = new Map<number, number>();
  lex.forEach((x, i) => score.set(x.row, (score.get(x.row) ?? 0) + 1 / (RRF_K + i + 1)));
  sims.slice(0, depth).forEach((x, i) => score.set(x.row, (score.get(x.row) ?? 0) + 1 / (RRF_K + i + 1)));
  return [...score].sort((a, b) => b[1] - a[1] || a[0] - b[0]).slice(0, limit).map(([r]) => r);
}

function pct(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
}

export async function benchRanking(o: RankingBenchOptions): Promise<void> {
  const { dataDir, stageMs, truthFile, builtAt } = await publishedCorpus(o.posts);
  const layout = dataDirLayout(dataDir);
  const gen = (await readCurrent(layout))!;
  const dir = generationDir(layout, gen);
  const manifest = await readManifest(layout, gen);
  const indexBytes = manifest.files.filter((f) => ['bm25.bin', 'text.hnsw', 'text-vectors.f32', 'embedder.bin'].includes(f.name)).reduce((a, f) => a + f.bytes, 0);
  const t0 = performance.now();
  const index = await loadSearchIndex(dir);
  const loadMs = performance.now() - t0;
  const queries = queriesFrom(truthFile, o.queries);
  const windows = WINDOW_KEYS;

  // Warm-up, then timed passes: ours and the peer on the same queries and windows.
  for (const q of queries.slice(0, 20)) search(index, { query: q.text, limit: 100, window: '30d' });
  const ours: number[] = [];
  const peer: number[] = [];
  let overlap = 0;
  for (const [i, q] of queries.entries()) {
    const window = windows[i % windows.length]!;
    let t = performance.now();
    const a = search(index, { query: q.text, limit: 100, window });
    ours.push(performance.now() - t);
    t = performance.now();
    const b = bruteForce(index, q.text, 100, window);
    peer.push(performance.now() - t);
    // Same candidates? (orderings differ by design: ours blends in recency and engagement)
    const exactSet = new Set(b);
    overlap += b.length ? a.filter((r) => exactSet.has(r.row)).length / b.length : 1;
  }

  // Relevance on the planted truth (window all): nDCG@10 (binary gain: the post belongs to the
  // query's narrative) and recall@100 (share of the narrative's posts in the top 100, capped).
  const member = membership(truthFile);
  const size = new Map<string, number>();
  for (const u of index.uuid) {
    const n = member.get(u);
    if (n) size.set(n, (size.get(n) ?? 0) + 1);
  }
  let ndcg = 0;
  let recall100 = 0;
  const distinct = [...new Map(queries.map((q) => [q.text, q])).values()];
  for (const q of distinct) {
    const rows = search(index, { query: q.text, limit: 100, window: 'all' });
    const rel = rows.map((r) => (member.get(r.uuid) === q.narrative ? 1 : 0));
    const dcg = rel.slice(0, 10).reduce((acc: number, g, i) => acc + g / Math.log2(i + 2), 0);
    const ideal = Array.from({ length: Math.min(10, size.get(q.narrative) ?? 0) }, (_, i) => 1 / Math.log2(i + 2)).reduce((x, y) => x + y, 0);
    ndcg += ideal ? dcg / ideal : 0;
    recall100 += rel.reduce((x: number, y) => x + y, 0) / Math.max(1, Math.min(100, size.get(q.narrative) ?? 0));
  }
  const quality = { ndcgAt10: ndcg / distinct.length, recallAt100: recall100 / distinct.length, queries: distinct.length };

  // HNSW recall@10 against exact inner-product search, on the query embeddings.
  const dim = index.embedder.params.dim;
  const exact = new hnswlib.BruteforceSearch('ip', dim);
  exact.initIndex(index.rows);
  for (let r = 0; r < index.rows; r++) {
    const v = index.vectors.subarray(r * dim, (r + 1) * dim);
    if (v.some((x) => x !== 0)) exact.addPoint(Array.from(v), r);
  }
  // At ef 100 and at the ef the ranking core uses for limit 100 (max(2 x limit, 100) = 200).
  const recallAt = (ef: number) => {
    index.hnsw.setEf(ef);
    let hit = 0;
    let total = 0;
    for (const q of queries) {
      const qv = embed(index.embedder, terms(q.text).filter((t) => index.bm25.vocab.has(t)));
      if (!qv.some((x) => x !== 0)) continue;
      const truth = new Set(exact.searchKnn(Array.from(qv), 10).neighbors);
      hit += index.hnsw.searchKnn(Array.from(qv), 10).neighbors.filter((r) => truth.has(r)).length;
      total += truth.size;
    }
    return total ? hit / total : 0;
  };
  const recallEf100 = recallAt(100);
  const recall = recallAt(200);
  const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
  const result = {
    date: new Date().toISOString(), machine: machine(), command: o.command, posts: o.posts, rows: index.rows, queries: queries.length,
    build: { featuresMs: stageMs.features, indexMs: stageMs.index, indexBytes }, loadMs,
    ours: { p50: pct(ours, 50), p99: pct(ours, 99), qps: queries.length / (sum(ours) / 1000) },
    peer: { name: 'exact brute-force hybrid', p50: pct(peer, 50), p99: pct(peer, 99), qps: queries.length / (sum(peer) / 1000) },
    top100OverlapWithExact: overlap / queries.length, hnswRecallAt10: recall, hnswRecallAt10Ef100: recallEf100, quality,
  };
  writeResultsJson(`ranking-${o.posts}`, result);
  const f = (n: number, d = 1) => n.toFixed(d);
  const md = `## Ranking core at ${o.posts.toLocaleString('en-US')} posts (limit 100)

Command: \`${o.command}\` — ${result.date.slice(0, 10)}, ${result.machine}; ${queries.length} queries (narrative keywords and hashtags) cycling through the four windows, one thread.

| | p50 | p99 | QPS (1 thread) |
|---|---|---|---|
| ours: BM25 + HNSW, RRF, blend | ${f(result.ours.p50, 2)} ms | ${f(result.ours.p99, 2)} ms | ${f(result.ours.qps, 0)} |
| peer: exact brute-force hybrid (same BM25, exact vector scan) | ${f(result.peer.p50, 2)} ms | ${f(result.peer.p99, 2)} ms | ${f(result.peer.qps, 0)} |

p50 ratio peer/ours ${f(result.peer.p50 / result.ours.p50, 1)}x. HNSW recall@10 against exact search (hnswlib BruteforceSearch): **${f(recall, 3)}** at ef 200, the ef the ranking core uses for limit 100 (${f(recallEf100, 3)} at ef 100). Relevance against the planted narratives (${quality.queries} distinct queries, window all): nDCG@10 **${f(quality.ndcgAt10, 3)}**, recall@100 **${f(quality.recallAt100, 3)}**. Share of the exact hybrid's top 100 that ours returns too: ${f(result.top100OverlapWithExact, 3)} (the orders differ by design: ours blends recency and engagement in). Build (pipeline stages of the cached build made ${builtAt.slice(0, 16).replace('T', ' ')} UTC; delete bench/.cache/ranking-${o.posts} to rebuild): features ${f((stageMs.features ?? 0) / 1000)} s, index ${f((stageMs.index ?? 0) / 1000)} s; index files ${f(indexBytes / 2 ** 20)} MiB; load ${f(loadMs / 1000, 2)} s. LanceDB as a peer: not yet run.`;
  writeResultsSection(`ranking-${o.posts}`, md);
  process.stdout.write(md + '\n');
}
