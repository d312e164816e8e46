// A generation loaded for ranking: the BM25 and HNSW indexes, the embedder, and the per-row
// columns the scores need, as typed arrays read once from posts.parquet. Rows are in snapshot
// order (published_at, uuid), so a time window is the contiguous range [windowStart[w], rows).
import fs from 'node:fs/promises';
import path from 'node:path';
import { assert, assertSameLength, assertSorted } from '../assert.ts';
import { loadBm25, parseBm25, type Bm25Index } from '../bm25.ts';
import { readFileShared } from '../shared-file.ts';
import { openDuckDB, sqlString } from '../duckdb.ts';
import { loadEmbedder, type EmbedderModel } from '../embedder.ts';
import type { Manifest } from '../generations.ts';
import { WINDOW_KEYS, type WindowKey } from '../windows.ts';
import { loadShards, type LoadedShards } from './hnsw-shards.ts';
import { loadVectorSpace, type VectorSpace } from '../vector-space.ts';
import { EnrichmentStore, loadEnrichmentStore } from '../enrichment/public-enrichment.ts';
import { Utf8Column, type Utf8ColumnParts } from '../utf8-column.ts';
import { QuantizedVectors } from '../quantized-vectors.ts';

/** The per-row columns the scores need, read from posts.parquet. */
interface RowColumns {
  rows: number;
  /** Held as UTF-8 (get(row) decodes one): a million uuid strings per thread were most of a server thread's heap. */
  uuid: Utf8Column;
  publishedAt: Float64Array;
  likes: Float64Array;
  comments: Float64Array;
  shares: Float64Array;
  views: Float64Array;
  /** NaN when unknown. */
  followers: Float64Array;
  /** 1 when the row has authored text (title or description), 0 when only tags, -1 when nothing. */
  textKind: Int8Array;
}

/** RowColumns in SharedArrayBuffers, as handed to a worker thread. */
export type RowColumnParts = Omit<RowColumns, 'uuid'> & { uuid: Utf8ColumnParts };

export interface SearchIndex extends RowColumns {
  generation: string;
  asOf: number;
  windowStart: Record<WindowKey, number>;
  /** Normalisers for the [0, 1] engagement and reach scores: log1p of the corpus maxima. */
  maxWeightedEngagementLog: number;
  maxFollowersLog: number;
  bm25: Bm25Index;
  /** The text HNSW graphs, one per time shard (null when loaded without them: see LoadOptions). */
  hnsw: LoadedShards | null;
  embedder: EmbedderModel;
  /** Every row's PublicEnrichment (docs/api.md, "PublicEnrichment"), compact; get(row) builds one. */
  enrichment: EnrichmentStore;
  /** The space of `vectors` and of the graphs: ours, or the input's precomputed one (queries mapped in). */
  textSpace: VectorSpace;
  /** The rows' text vectors, int8-quantised (the graphs hold their own float32 copy for the search). */
  vectors: QuantizedVectors;
  /** The file images behind `vectors` and `bm25` when loaded shared (LoadOptions.share). */
  shared: SharedIndexParts | null;
}

/** The big read-only parts, in SharedArrayBuffers, handed to worker threads instead of copies. */
export interface SharedIndexParts {
  vectors: { codes: Int8Array; scales: Float32Array };
  bm25: Uint8Array;
  columns: RowColumnParts;
  embedder: EmbedderModel;
}

export interface LoadOptions {
  /** Load the HNSW graphs (default true); the server's main thread leaves them to its search workers. */
  graphs?: boolean;
  /** Load every row's PublicEnrichment (default true); search workers do not need it. */
  enrichment?: boolean;
  /** Read vectors and postings into SharedArrayBuffers (exposed as `shared`). */
  share?: boolean;
  /** Use these images (another thread's `shared`) instead of reading the files. */
  shared?: SharedIndexParts;
}

const LOAD_CHUNK = 100_000;

/** First row whose published_at >= t (rows are sorted by published_at). */
function lowerBound(a: Float64Array, t: number): number {
  let lo = 0;
  let hi = a.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (a[mid]! < t) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * The engagement the ranking weighs (engagementScore, docs/fields.md): likes + 2 x comments + 3 x
 * shares. Not to be confused with a post's interactions, the plain sum the maps count.
 */
export function weightedEngagement(likes: number, comments: number, shares: number): number {
  return likes + 2 * comments + 3 * shares;
}

/**
 * The row columns from posts.parquet, in chunks of rows straight into typed arrays: one query for a
 * million rows held every value as a JS object at once (hundreds of MB of garbage in the server's
 * load peak). With `share` the arrays live in SharedArrayBuffers.
 */
async function readRowColumns(generationDir: string, share: boolean): Promise<RowColumns> {
  const db = await openDuckDB();
  const posts = sqlString(path.join(generationDir, 'posts.parquet'));
  try {
    const rows = Number((await db.all<{ n: bigint }>(`SELECT count(*) AS n FROM read_parquet(${posts})`))[0]!.n);
    const column = () => (share ? new Float64Array(new SharedArrayBuffer(rows * 8)) : new Float64Array(rows));
    const c: RowColumns = {
      rows,
      uuid: new Utf8Column(rows),
      publishedAt: column(),
      likes: column(),
      comments: column(),
      shares: column(),
      views: column(),
      followers: column(),
      textKind: share ? new Int8Array(new SharedArrayBuffer(rows)) : new Int8Array(rows),
    };
    for (let start = 0; start < rows; start += LOAD_CHUNK) {
      const reader = await db.conn.runAndReadAll(`SELECT uuid, epoch_ms(published_at)::DOUBLE AS published_at,
          like_count::DOUBLE AS likes, comment_count::DOUBLE AS comments, share_count::DOUBLE AS shares, view_count::DOUBLE AS views,
          follower_count::DOUBLE AS followers,
          CASE WHEN title IS NOT NULL OR description IS NOT NULL THEN 1 WHEN len(tags) > 0 THEN 0 ELSE -1 END::TINYINT AS text_kind
        FROM read_parquet(${posts}, file_row_number = true)
        WHERE file_row_number >= ${start} AND file_row_number < ${start + LOAD_CHUNK} ORDER BY file_row_number`);
      const cols = reader.getColumnsObjectJS() as Record<string, unknown[]>;
      const num = (v: unknown, nullAs = 0) => (v === null || v === undefined ? nullAs : Number(v));
      cols.uuid!.forEach((u, i) => {
        const r = start + i;
        c.uuid.set(r, u as string);
        c.publishedAt[r] = num(cols.published_at![i]);
        c.likes[r] = num(cols.likes![i]);
        c.comments[r] = num(cols.comments![i]);
        c.shares[r] = num(cols.shares![i]);
        c.views[r] = num(cols.views![i]);
        c.followers[r] = num(cols.followers![i], NaN);
        c.textKind[r] = num(cols.text_kind![i]);
      });
    }
    c.uuid.seal();
    if (share) c.uuid = new Utf8Column(rows, c.uuid.shared());
    return c;
  } finally {
    db.close();
  }
}

export async function loadSearchIndex(generationDir: string, opts: LoadOptions = {}): Promise<SearchIndex> {
  const manifest = JSON.parse(await fs.readFile(path.join(generationDir, 'manifest.json'), 'utf8')) as Manifest;
  const given = opts.shared?.columns;
  const columns = given
    ? { ...given, uuid: new Utf8Column(given.rows, given.uuid) }
    : await readRowColumns(generationDir, Boolean(opts.share));
  const { rows, publishedAt, likes, comments, shares, followers } = columns;
  const asOf = Date.parse(manifest.as_of);
  // Rows are in published_at order (the snapshot's order): the window starts below are binary searches.
  assertSorted(publishedAt, `${generationDir}: posts.parquet published_at`);
  const windowStart = Object.fromEntries(
    WINDOW_KEYS.map((w) => [w, lowerBound(publishedAt, Date.parse(manifest.windows[w].start))]),
  ) as Record<WindowKey, number>;
  let maxE = 0;
  let maxF = 0;
  for (let r = 0; r < rows; r++) {
    maxE = Math.max(maxE, weightedEngagement(likes[r]!, comments[r]!, shares[r]!));
    if (followers[r]! > maxF) maxF = followers[r]!;
  }
  const embedder = opts.shared?.embedder ?? (await loadEmbedder(path.join(generationDir, 'embedder.bin'), { share: Boolean(opts.share) }));
  const file = (n: string) => path.join(generationDir, n);
  const textSpace = loadVectorSpace(generationDir, 'text');
  const vectors = opts.shared
    ? new QuantizedVectors(textSpace.dim, opts.shared.vectors.codes, opts.shared.vectors.scales)
    : QuantizedVectors.fromFile(file('text-vectors.f32'), textSpace.dim, Boolean(opts.share));
  if (vectors.rows !== rows) throw new Error(`${generationDir}: text-vectors.f32 holds ${vectors.rows} rows, posts.parquet ${rows}`);
  const shared: SharedIndexParts | null =
    opts.shared ??
    (opts.share
      ? {
          vectors: { codes: vectors.codes, scales: vectors.scales },
          bm25: readFileShared(file('bm25.bin')),
          columns: { ...columns, uuid: columns.uuid.parts() },
          embedder,
        }
      : null);
  assert(
    windowStart['7d'] >= windowStart['30d'] && windowStart['30d'] >= windowStart['90d'] && windowStart['90d'] >= windowStart.all,
    'window starts nest: 7d within 30d within 90d within all',
  );
  const hnsw = opts.graphs === false ? null : loadShards(generationDir, 'text');
  if (hnsw && hnsw.dim !== textSpace.dim)
    throw new Error(`${generationDir}: text graphs have dimension ${hnsw.dim}, the text space ${textSpace.dim}`);
  const bm25 = shared ? parseBm25(shared.bm25) : await loadBm25(file('bm25.bin'));
  assertSameLength(bm25.docLen.length, rows, `${generationDir}: bm25.bin documents against posts.parquet rows`);
  return {
    ...columns,
    generation: manifest.generation,
    asOf,
    windowStart,
    maxWeightedEngagementLog: Math.log1p(maxE),
    maxFollowersLog: Math.log1p(maxF),
    bm25,
    hnsw,
    embedder,
    textSpace,
    vectors,
    shared,
    enrichment: opts.enrichment === false ? new EnrichmentStore(0) : await loadEnrichmentStore(generationDir, rows),
  };
}
