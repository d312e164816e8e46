// A generation's rows live in time segments (docs/snapshot-tables.md, "Segments"): disjoint spans of
// published_at, each holding its posts in (published_at, uuid) order with everything computed per
// post (vectors, analysed terms, enrichment, neighbour scores, visual elements) and its own indexes
// (BM25 postings, HNSW graphs). Segments follow one another in time, so their rows laid end to end
// are the generation's rows in time order: global row = the segment's firstRow + its local row, and
// a time window is still the run of rows from its first row to the end.
//
// A segment is immutable once written: the next generation takes an unchanged one as it is (its
// files hard-linked into the new generation's folder), and only builds the segments whose posts
// changed (the growing head, where new posts land, and any older segment a late post falls into).
// A post deleted after its segment was built stays a row of it, masked (deleted-rows.u32), until
// the segment is rebuilt.
//   segments/<id>/uuids.txt          the rows' uuids, one per line, in row order
//   segments/<id>/text-vectors.f32   rows x text dim, float32 (zeros: no text)
//   segments/<id>/visual-vectors.f32 rows x visual dim, float32 (zeros: no picture)
//   segments/<id>/doc-terms.bin      the rows' analysed terms (core/text/term-lists.ts)
//   segments/<id>/label-words.bin    the rows' label words (core/maps/row-label-words.ts; absent in older segments)
//   segments/<id>/bm25.bin           BM25 postings over the segment's rows (core/ranking/bm25.ts)
//   segments/<id>/text.hnsw, visual.hnsw  HNSW graphs, labels = local rows (absent: no points)
//   segments/<id>/text-from-<row>.hnsw    window tails of the text graph (textTails)
//   segments/<id>/enrichment.parquet, neighbour-scores.parquet, visual-elements.parquet (row_id = local row)
import fs from 'node:fs';
import path from 'node:path';

/** A window tail of a segment's text graph: its first local row and its points. */
export interface SegmentTail {
  from: number;
  points: number;
}

export interface SegmentInfo {
  id: string;
  /** First instant of the segment's span (inclusive), ISO. */
  from: string;
  /** End of its span (exclusive), ISO; null for the head, the open-ended newest segment. */
  to: string | null;
  rows: number;
  /** Points in its graphs (rows with a text vector, with a visual vector). */
  textPoints: number;
  visualPoints: number;
  /**
   * Window tails of its text graph (core/ranking/segment-graphs.ts, tailFile): the first local row
   * and points of each. Absent in generations written before them.
   */
  textTails?: SegmentTail[];
  /** Generation that built it. */
  builtIn: string | null;
  /** Its last row (published_at ISO, uuid): posts sorting after it are appended, not rebuilt. Null when empty. */
  last: { t: string; uuid: string } | null;
}

/** A segment as a generation lists it (manifest.json `segments`): where its rows start. */
export interface GenerationSegment extends SegmentInfo {
  firstRow: number;
}

export const SEGMENTS_DIR = 'segments';

/** The generation's masked rows (u32 global rows, ascending). */
export const DELETED_ROWS_FILE = 'deleted-rows.u32';

export function segmentDir(generationDir: string, id: string): string {
  return path.join(generationDir, SEGMENTS_DIR, id);
}

/** Segment ids sort in the order they were made: s000001, s000002, ... */
export function segmentId(n: number): string {
  return `s${String(n).padStart(6, '0')}`;
}

export function segmentNumber(id: string): number {
  return Number(id.slice(1));
}

/** The generation's segments with their first rows, oldest first. */
export function withFirstRows(segments: readonly SegmentInfo[]): GenerationSegment[] {
  let at = 0;
  return segments.map((s) => {
    const g = { ...s, firstRow: at };
    at += s.rows;
    return g;
  });
}

/** The rows' uuids of a segment, in row order. */
export function readSegmentUuids(dir: string): string[] {
  const text = fs.readFileSync(path.join(dir, 'uuids.txt'), 'utf8');
  return text === '' ? [] : text.slice(0, -1).split('\n');
}

/** Every row's uuid of a generation (its segments end to end, masked rows included). */
export function readGenerationUuids(generationDir: string, segments: readonly SegmentInfo[]): string[] {
  return segments.flatMap((s) => readSegmentUuids(segmentDir(generationDir, s.id)));
}

/** The masked rows of a generation (global rows of posts deleted after their segment was built), sorted. */
export function readDeletedRows(generationDir: string): Uint32Array {
  try {
    const buf = fs.readFileSync(path.join(generationDir, DELETED_ROWS_FILE));
    const out = new Uint32Array(buf.length / 4);
    new Uint8Array(out.buffer).set(buf);
    return out;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return new Uint32Array(0);
    throw err;
  }
}

/** A masked row (NaN) takes the time of the row before it (the first rows, of the first live row), keeping the rows sorted. */
export function fillMaskedTimes(t: Float64Array): void {
  let last = NaN;
  for (let i = 0; i < t.length; i++)
    if (Number.isNaN(t[i]!)) t[i] = last;
    else last = t[i]!;
  const first = t.findIndex((x) => !Number.isNaN(x));
  for (let i = 0; i < (first < 0 ? t.length : first); i++) t[i] = first < 0 ? 0 : t[first]!;
}

/** The segment holding global row `row` (segments oldest first, with their first rows). */
export function segmentOfRow<S extends { firstRow: number; rows: number }>(segments: readonly S[], row: number): S {
  let lo = 0;
  let hi = segments.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (segments[mid]!.firstRow <= row) lo = mid;
    else hi = mid - 1;
  }
  const s = segments[lo];
  if (!s || row < s.firstRow || row >= s.firstRow + s.rows) throw new Error(`row ${row} is in no segment`);
  return s;
}
