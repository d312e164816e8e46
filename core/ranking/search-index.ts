// A generation loaded for ranking: the BM25 and HNSW indexes of its time segments, the embedder,
// and the per-row columns the scores need, as typed arrays read once from posts.parquet. Rows are
// the segments' rows end to end, in (published_at, uuid) order, so a time window is the contiguous
// range [windowStart[w], rows). Masked rows (posts deleted after their segment was built) have no
// post, no vector and are never returned (`deleted`).
//
// Loaded next to the generation being served (`previous`), a segment both hold is not read again:
// its postings and graphs are the same objects, its vectors and enrichment are copied from the
// previous arrays. A swap to an incremental generation reads only its new segments.
import fs from 'node:fs/promises';
import path from 'node:path';
import { assert, assertSameLength, assertSorted } from '../infra/assert.ts';
import { parseBm25, segmentedBm25, type Bm25Index, type SegmentedBm25 } from './bm25.ts';
import { readFileShared } from '../infra/shared-file.ts';
import { openDuckDB, sqlString } from '../infra/duckdb.ts';
import { loadEmbedder, type EmbedderModel } from '../vectors/embedder.ts';
import type { Manifest } from '../snapshots/generations.ts';
import { WINDOW_KEYS, type WindowKey } from '../snapshots/windows.ts';
import { loadGraphs, type LoadedGraphs, type SegmentGraph } from './segment-graphs.ts';
import { loadVectorSpace, type VectorSpace } from '../vectors/vector-space.ts';
import { EnrichmentStore, enrichmentTablesIn, fillEnrichment } from '../enrichment/public-enrichment.ts';
import { fillMaskedTimes, readDeletedRows, segmentDir, withFirstRows, type GenerationSegment } from '../snapshots/segments.ts';
import { Utf8Column, type Utf8ColumnParts } from '../infra/utf8-column.ts';
import { QuantizedVectors } from '../vectors/quantized-vectors.ts';

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
type RowColumnParts = Omit<RowColumns, 'uuid'> & { uuid: Utf8ColumnParts };

export interface SearchIndex extends RowColumns {
  generation: string;
  asOfMs: number;
  windowStart: Record<WindowKey, number>;
  /** Normalisers for the [0, 1] engagement and reach scores: log1p of the corpus maxima. */
  maxWeightedEngagementLog: number;
  maxFollowersLog: number;
  bm25: SegmentedBm25;
  /** The text HNSW graphs, one per segment (null when loaded without them: see LoadOptions). */
  hnsw: LoadedGraphs | null;
  /** The generation's segments, oldest first, with their first rows. */
  segments: GenerationSegment[];
  /** 1 for a masked row. */
  deleted: Uint8Array;
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
  /** Each segment's bm25.bin image, by segment id. */
  bm25: Record<string, Uint8Array>;
  columns: RowColumnParts;
  embedder: EmbedderModel;
  deleted: Uint8Array;
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
  /** Indexes of other generations this thread holds: segments they hold are taken from them, not read. */
  held?: readonly SearchIndex[];
}

const LOAD_CHUNK = 100_000;

/** First row whose published_at >= t (rows are sorted by published_at). */
export function lowerBound(a: Float64Array, t: number): number {
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
async function readRowColumns(generationDir: string, rows: number, share: boolean): Promise<RowColumns> {
  const db = await openDuckDB();
  const posts = sqlString(path.join(generationDir, 'posts.parquet'));
  try {
    const column = () => (share ? new Float64Array(new SharedArrayBuffer(rows * 8)) : new Float64Array(rows));
    const c: RowColumns = {
      rows,
      uuid: new Utf8Column(rows),
      publishedAt: column().fill(NaN),
      likes: column(),
      comments: column(),
      shares: column(),
      views: column(),
      followers: column(),
      textKind: (share ? new Int8Array(new SharedArrayBuffer(rows)) : new Int8Array(rows)).fill(-1),
    };
    for (let start = 0; start < rows; start += LOAD_CHUNK) {
      const reader = await db.conn.runAndReadAll(`SELECT uuid, epoch_ms(published_at)::DOUBLE AS published_at,
          like_count::DOUBLE AS likes, comment_count::DOUBLE AS comments, share_count::DOUBLE AS shares, view_count::DOUBLE AS views,
          follower_count::DOUBLE AS followers,
          CASE WHEN title IS NOT NULL OR description IS NOT NULL THEN 1 WHEN len(tags) > 0 THEN 0 ELSE -1 END::TINYINT AS text_kind, row_id
        FROM read_parquet(${posts})
        WHERE row_id >= ${start} AND row_id < ${start + LOAD_CHUNK} ORDER BY row_id`);
      const cols = reader.getColumnsObjectJS() as Record<string, unknown[]>;
      const num = (v: unknown, nullAs = 0) => (v === null || v === undefined ? nullAs : Number(v));
      cols.uuid!.forEach((u, i) => {
        const r = Number(cols.row_id![i]);
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
    fillMaskedTimes(c.publishedAt);
    if (share) c.uuid = new Utf8Column(rows, c.uuid.shared());
    return c;
  } finally {
    db.close();
  }
}

/** A segment held by one of `held` (same id, same files): its index there and its first row. */
function heldSegment(held: readonly SearchIndex[], id: string): { index: SearchIndex; firstRow: number; bm25: Bm25Index } | null {
  for (const h of held) {
    const s = h.segments.find((x) => x.id === id);
    const b = h.bm25.segments.find((x) => x.id === id);
    if (s && b) return { index: h, firstRow: s.firstRow, bm25: b.index };
  }
  return null;
}

/** The generation's manifest and its segments with their first rows; a generation without segments is refused. */
async function readSegments(generationDir: string): Promise<{ manifest: Manifest; segments: GenerationSegment[] }> {
  const manifest = JSON.parse(await fs.readFile(path.join(generationDir, 'manifest.json'), 'utf8')) as Manifest;
  if (!manifest.segments)
    throw new Error(
      `${generationDir}: generation ${manifest.generation} has no segments (schema version ${manifest.schema_version}); run the pipeline`,
    );
  return { manifest, segments: withFirstRows(manifest.segments) };
}

/** Each window's first row. Rows are in published_at order (the snapshot's order): the starts are binary searches. */
function windowStarts(generationDir: string, manifest: Manifest, publishedAt: Float64Array): Record<WindowKey, number> {
  assertSorted(publishedAt, `${generationDir}: posts.parquet published_at`);
  return Object.fromEntries(WINDOW_KEYS.map((w) => [w, lowerBound(publishedAt, Date.parse(manifest.windows[w].start))])) as Record<
    WindowKey,
    number
  >;
}

/** The corpus maxima of the weighted engagement and of followers, for the scores' normalisers. */
function corpusMaxima({ rows, likes, comments, shares, followers }: RowColumns): { maxE: number; maxF: number } {
  let maxE = 0;
  let maxF = 0;
  for (let r = 0; r < rows; r++) {
    maxE = Math.max(maxE, weightedEngagement(likes[r]!, comments[r]!, shares[r]!));
    if (followers[r]! > maxF) maxF = followers[r]!;
  }
  return { maxE, maxF };
}

/** What a segment's load reads beside it: its directory, what other indexes hold, and how to keep the images. */
interface SegmentLoad {
  generationDir: string;
  segments: GenerationSegment[];
  held: readonly SearchIndex[];
  opts: LoadOptions;
}

const dirOf = (l: SegmentLoad, s: GenerationSegment) => segmentDir(l.generationDir, s.id);

/** The rows' text vectors, int8-quantised (a held segment's copied), masked rows cleared and marked in `deleted`. */
function loadTextVectors(
  l: SegmentLoad,
  rows: number,
  dim: number,
  masked: Uint32Array,
): { vectors: QuantizedVectors; deleted: Uint8Array } {
  const { opts } = l;
  if (opts.shared)
    return { vectors: new QuantizedVectors(dim, opts.shared.vectors.codes, opts.shared.vectors.scales), deleted: opts.shared.deleted };
  const vectors = QuantizedVectors.allocate(rows, dim, Boolean(opts.share));
  const deleted = opts.share ? new Uint8Array(new SharedArrayBuffer(rows)) : new Uint8Array(rows);
  for (const s of l.segments) {
    const h = heldSegment(l.held, s.id);
    if (h) vectors.copyRows(h.index.vectors, h.firstRow, s.firstRow, s.rows);
    else {
      const n = vectors.quantiseFile(path.join(dirOf(l, s), 'text-vectors.f32'), s.firstRow);
      if (n !== s.rows) throw new Error(`${l.generationDir}: segment ${s.id}'s text-vectors.f32 holds ${n} rows, the manifest ${s.rows}`);
    }
  }
  for (const r of masked) (vectors.clearRow(r), (deleted[r] = 1));
  return { vectors, deleted };
}

/** Postings: a held segment's index object, else its file (shared images are parsed as views); `images` the shared ones by segment id. */
async function loadPostings(l: SegmentLoad): Promise<{ bm25: SegmentedBm25; images: Record<string, Uint8Array> }> {
  const { opts } = l;
  const images: Record<string, Uint8Array> = {};
  const bm25Parts = await Promise.all(
    l.segments.map(async (s) => {
      const h = heldSegment(l.held, s.id);
      const image =
        opts.shared?.bm25[s.id] ?? h?.index.shared?.bm25[s.id] ?? (opts.share ? readFileShared(path.join(dirOf(l, s), 'bm25.bin')) : null);
      if (image) images[s.id] = image;
      const index = h?.bm25 ?? (image ? parseBm25(image) : parseBm25(await fs.readFile(path.join(dirOf(l, s), 'bm25.bin'))));
      assertSameLength(index.docLen.length, s.rows, `${l.generationDir}: segment ${s.id}'s bm25.bin documents against its rows`);
      return { id: s.id, firstRow: s.firstRow, index };
    }),
  );
  return { bm25: segmentedBm25(bm25Parts), images };
}

/** The text HNSW graphs, a held segment's taken from its index; null when not wanted (LoadOptions.graphs). */
function loadTextGraphs(l: SegmentLoad, dim: number, masked: Uint32Array): LoadedGraphs | null {
  if (l.opts.graphs === false) return null;
  const graphsHeld = (id: string): SegmentGraph | undefined => {
    for (const h of l.held) {
      const g = h.hnsw?.segments.find((x) => x.id === id);
      if (g) return g;
    }
    return undefined;
  };
  return loadGraphs(
    'text',
    dim,
    l.segments.map((s) => ({ id: s.id, dir: dirOf(l, s), firstRow: s.firstRow, rows: s.rows, points: s.textPoints, tails: s.textTails })),
    masked,
    graphsHeld,
  );
}

/** Every row's PublicEnrichment (a held segment's copied), or an empty store when not wanted (LoadOptions.enrichment). */
async function loadEnrichment(l: SegmentLoad, rows: number): Promise<EnrichmentStore> {
  if (l.opts.enrichment === false) return new EnrichmentStore(0);
  const enrichment = new EnrichmentStore(rows);
  for (const s of l.segments) {
    const h = l.held.find((x) => x.enrichment.rows > 0 && x.segments.some((y) => y.id === s.id));
    if (h) enrichment.copyRows(h.enrichment, h.segments.find((y) => y.id === s.id)!.firstRow, s.firstRow, s.rows);
    else await fillEnrichment(enrichment, enrichmentTablesIn(dirOf(l, s)), s.firstRow, s.rows);
  }
  enrichment.seal();
  return enrichment;
}

export async function loadSearchIndex(generationDir: string, opts: LoadOptions = {}): Promise<SearchIndex> {
  const { manifest, segments } = await readSegments(generationDir);
  const total = segments.reduce((a, s) => a + s.rows, 0);
  const given = opts.shared?.columns;
  const columns = given
    ? { ...given, uuid: new Utf8Column(given.rows, given.uuid) }
    : await readRowColumns(generationDir, total, Boolean(opts.share));
  const { rows } = columns;
  assertSameLength(rows, total, `${generationDir}: posts.parquet rows against the segments'`);
  const windowStart = windowStarts(generationDir, manifest, columns.publishedAt);
  const { maxE, maxF } = corpusMaxima(columns);
  const embedder = opts.shared?.embedder ?? (await loadEmbedder(path.join(generationDir, 'embedder.bin'), { share: Boolean(opts.share) }));
  const textSpace = loadVectorSpace(generationDir, 'text');
  const masked = readDeletedRows(generationDir);
  const load: SegmentLoad = { generationDir, segments, held: opts.held ?? [], opts };
  const { vectors, deleted } = loadTextVectors(load, rows, textSpace.dim, masked);
  const { bm25, images } = await loadPostings(load);
  const shared: SharedIndexParts | null =
    opts.shared ??
    (opts.share
      ? {
          vectors: { codes: vectors.codes, scales: vectors.scales },
          bm25: images,
          columns: { ...columns, uuid: columns.uuid.parts() },
          embedder,
          deleted,
        }
      : null);
  assert(
    windowStart['7d'] >= windowStart['30d'] && windowStart['30d'] >= windowStart['90d'] && windowStart['90d'] >= windowStart.all,
    'window starts nest: 7d within 30d within 90d within all',
  );
  const hnsw = loadTextGraphs(load, textSpace.dim, masked);
  const enrichment = await loadEnrichment(load, rows);
  return {
    ...columns,
    generation: manifest.generation,
    asOfMs: Date.parse(manifest.as_of),
    windowStart,
    maxWeightedEngagementLog: Math.log1p(maxE),
    maxFollowersLog: Math.log1p(maxF),
    bm25,
    hnsw,
    segments,
    deleted,
    embedder,
    textSpace,
    vectors,
    shared,
    enrichment,
  };
}
