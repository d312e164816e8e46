// LanceDB as a peer of the ranking core, run by bench/suites/ranking.ts as a child process
// (`node bench/peers/lancedb-peer.mjs DIR`), so LanceDB's native library and memory stay out of
// the benchmark's own process and tsc never sees this file (tsconfig excludes bench/peers).
//
// Input (written by the bench into DIR):
//   input.json   { rows, dim, rowsFile, vectorsFile, dbDir, warmup, limit, rrfK,
//                  queries: [{ text, whereMs, vector }], quality: [{ text, whereMs, vector }] }
//                whereMs: the window's start in epoch ms, or null when the window holds every row;
//                vector: the query embedding (number[]), or null when the query has no vector part.
//   rowsFile     NDJSON, one {"id","text","published_at"} per row, in generation row order
//   vectorsFile  the generation's text-vectors.f32: rows x dim float32, row-major, unit length,
//                all-zero rows for posts without text
// Output: DIR/result.json (see the end of this file). Progress goes to stderr.
//
// The table: id (our row number), text (the exact text our analyzer indexed), published_at (epoch
// ms), vector. Indexes:
//   - FTS on text with LanceDB's defaults (simple tokenizer, lower case, English stemming and stop
//     words, ASCII folding);
//   - BTREE on published_at, LanceDB's documented way to make a `where` prefilter cheap;
//   - IVF_PQ on vector, distance cosine (our vectors are unit length, so cosine is the similarity
//     they were built for; all-zero rows have no direction and are never returned, as in ours).
//     Why IVF_PQ: LanceDB's vector-index guide says that when vector search frequently carries a
//     metadata filter (`where(...)`), IVF_PQ (or IVF_RQ) is the choice, and that HNSW-backed IVF
//     indexes (IVF_HNSW_SQ/FLAT) show higher latency variance on filtered workloads; every query
//     here but those of window `all` carries the window filter. Partitions, sub-vectors and bits
//     are LanceDB's defaults for the table's size (sqrt(rows) partitions, dim/16 sub-vectors,
//     8 bits); the search side keeps LanceDB's default nprobes and no refine step.
// The query: LanceDB's hybrid search: fullTextSearch(text) + nearestTo(vector), fused by its RRF
// reranker (k = 60, as ours), the window as a prefilter, limit 100; FTS alone when the query has no
// vector part (LanceDB's hybrid needs both).
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import * as lancedb from '@lancedb/lancedb';
import * as arrow from 'apache-arrow';

const dir = process.argv[2];
if (!dir) {
  process.stderr.write('usage: node bench/peers/lancedb-peer.mjs DIR\n');
  process.exit(2);
}
const input = JSON.parse(fs.readFileSync(path.join(dir, 'input.json'), 'utf8'));
const { rows, dim, limit, warmup, rrfK } = input;
const log = (s) => process.stderr.write(`[lancedb-peer] ${s}\n`);
const version = JSON.parse(fs.readFileSync(new URL('./node_modules/@lancedb/lancedb/package.json', import.meta.url), 'utf8')).version;

// ---- inputs to Arrow (not timed: this is the harness handing LanceDB its data) ----------------
const ids = new Int32Array(rows);
const publishedAt = new BigInt64Array(rows);
const texts = new Array(rows);
let n = 0;
for await (const line of readline.createInterface({ input: fs.createReadStream(input.rowsFile, 'utf8'), crlfDelay: Infinity })) {
  if (!line) continue;
  const r = JSON.parse(line);
  if (r.id !== n) throw new Error(`rows file out of order at line ${n + 1} (id ${r.id})`);
  ids[n] = r.id;
  texts[n] = r.text;
  publishedAt[n] = BigInt(r.published_at);
  n++;
}
if (n !== rows) throw new Error(`rows file has ${n} rows, input.json says ${rows}`);
const raw = fs.readFileSync(input.vectorsFile);
if (raw.byteLength !== rows * dim * 4) throw new Error(`vectors file is ${raw.byteLength} bytes, expected ${rows} x ${dim} x 4`);
const vectors = new Float32Array(raw.buffer, raw.byteOffset, rows * dim);

const BATCH = 65_536;
const vectorType = new arrow.FixedSizeList(dim, new arrow.Field('item', new arrow.Float32(), true));
const batches = [];
for (let s = 0; s < rows; s += BATCH) {
  const e = Math.min(rows, s + BATCH);
  const child = arrow.makeData({ type: new arrow.Float32(), length: (e - s) * dim, data: vectors.subarray(s * dim, e * dim) });
  batches.push(
    new arrow.Table({
      id: arrow.makeVector(ids.subarray(s, e)),
      text: arrow.vectorFromArray(texts.slice(s, e), new arrow.Utf8()),
      published_at: arrow.makeVector(publishedAt.subarray(s, e)),
      vector: arrow.makeVector(arrow.makeData({ type: vectorType, length: e - s, nullCount: 0, child })),
    }),
  );
}
const data = batches.length ? batches[0].concat(...batches.slice(1)) : null;
if (!data) throw new Error('no rows');

// ---- build (timed): table, FTS index, BTREE on published_at, IVF_PQ ------------------------
fs.mkdirSync(input.dbDir, { recursive: true });
const ms = () => performance.now();
const build = {};
let t = ms();
const db = await lancedb.connect(input.dbDir);
const table = await db.createTable('posts', data);
build.tableMs = ms() - t;
log(`table: ${rows} rows in ${(build.tableMs / 1000).toFixed(1)} s`);
t = ms();
await table.createIndex('text', { config: lancedb.Index.fts() });
build.ftsMs = ms() - t;
log(`FTS index in ${(build.ftsMs / 1000).toFixed(1)} s`);
t = ms();
await table.createIndex('published_at', { config: lancedb.Index.btree() });
build.btreeMs = ms() - t;
t = ms();
await table.createIndex('vector', { config: lancedb.Index.ivfPq({ distanceType: 'cosine' }) });
build.vectorMs = ms() - t;
log(`IVF_PQ index in ${(build.vectorMs / 1000).toFixed(1)} s`);
build.totalMs = build.tableMs + build.ftsMs + build.btreeMs + build.vectorMs;

function duBytes(p) {
  const st = fs.statSync(p);
  if (!st.isDirectory()) return st.size;
  return fs.readdirSync(p).reduce((a, f) => a + duBytes(path.join(p, f)), 0);
}
const bytes = duBytes(input.dbDir);
const indices = (await table.listIndices()).map((i) => ({ name: i.name, type: i.indexType, sizeBytes: i.sizeBytes ?? null }));
const vectorIndex = await table.indexStats('vector_idx').catch(() => undefined);

// ---- queries ---------------------------------------------------------------------------------
const reranker = await lancedb.rerankers.RRFReranker.create(rrfK);
function run(q) {
  let b = table.query().fullTextSearch(q.text);
  if (q.vector) b = b.nearestTo(q.vector).distanceType('cosine').rerank(reranker);
  if (q.whereMs !== null) b = b.where(`published_at >= ${q.whereMs}`);
  // Only the id comes back (the text and vector columns would be dead weight). LanceDB still adds
  // its score columns and warns so per query; the bench runs this with LANCEDB_LOG=error.
  return b.limit(limit).select(['id']).toArray();
}

for (const q of input.queries.slice(0, warmup)) await run(q);
const latencies = [];
const results = [];
// CPU time of this process over the timed queries: LanceDB may spread one query over several threads.
const cpu0 = process.cpuUsage();
for (const q of input.queries) {
  const t0 = ms();
  const out = await run(q);
  latencies.push(ms() - t0);
  results.push(out.map((r) => r.id));
}
const cpu = process.cpuUsage(cpu0);
log(`${input.queries.length} timed queries done`);
const quality = [];
for (const q of input.quality) quality.push((await run(q)).map((r) => r.id));

// The IVF_PQ index's own recall@10 against LanceDB's exact scan (bypassVectorIndex), window all,
// on the timed queries that have a vector part: the figure our HNSW recall@10 is compared with.
let hit = 0;
let total = 0;
for (const q of input.queries) {
  if (!q.vector) continue;
  const knn = (exact) => {
    let b = table.query().nearestTo(q.vector).distanceType('cosine');
    if (exact) b = b.bypassVectorIndex();
    return b.limit(10).select(['id']).toArray();
  };
  const truth = new Set((await knn(true)).map((r) => r.id));
  hit += (await knn(false)).filter((r) => truth.has(r.id)).length;
  total += truth.size;
}

fs.writeFileSync(
  path.join(dir, 'result.json'),
  JSON.stringify({
    name: 'LanceDB',
    version,
    node: process.version,
    rows,
    dim,
    index: { vector: 'IVF_PQ', distance: 'cosine', vectorStats: vectorIndex ?? null, indices },
    build,
    bytes,
    latenciesMs: latencies,
    cpuMsPerQuery: (cpu.user + cpu.system) / 1000 / Math.max(1, input.queries.length),
    ids: results,
    qualityIds: quality,
    vectorRecallAt10: total ? hit / total : null,
  }),
);
log(`done: build ${(build.totalMs / 1000).toFixed(1)} s, ${(bytes / 2 ** 20).toFixed(1)} MiB on disk`);
