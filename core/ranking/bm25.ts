// BM25 (k1 1.2, b 0.75, Lucene's idf) over the analyzer's terms, as flat typed arrays: a term's
// postings are docs[starts[t] .. starts[t+1]) with their term frequencies, doc ids ascending.
// Built once per generation from the features stage's doc-terms; loads with one read.
import { assertInt } from '../infra/assert.ts';
import fs from 'node:fs/promises';
import { writeFileAtomic } from '../infra/durable-fs.ts';

export const BM25_K1 = 1.2;
export const BM25_B = 0.75;

export interface Bm25Index {
  vocab: Map<string, number>;
  starts: Uint32Array;
  docs: Uint32Array;
  tfs: Uint16Array;
  docLen: Uint16Array;
  avgdl: number;
}

/** Build postings from each row's term ids (offsets/ids as written by the features stage). */
export function buildBm25(vocab: string[], offsets: Uint32Array, ids: Uint32Array): Bm25Index {
  const rows = offsets.length - 1;
  const terms = vocab.length;
  const docLen = new Uint16Array(rows);
  // Pass 1: document frequency of each term (a term counted once per row).
  const df = new Uint32Array(terms);
  const seen = new Int32Array(terms).fill(-1);
  let total = 0;
  let longest = 0;
  for (let d = 0; d < rows; d++) {
    longest = Math.max(longest, offsets[d + 1]! - offsets[d]!);
    docLen[d] = Math.min(65535, offsets[d + 1]! - offsets[d]!);
    total += docLen[d]!;
    for (let i = offsets[d]!; i < offsets[d + 1]!; i++) {
      const t = ids[i]!;
      if (seen[t] !== d) ((seen[t] = d), df[t]!++);
    }
  }
  const starts = new Uint32Array(terms + 1);
  for (let t = 0; t < terms; t++) starts[t + 1] = starts[t]! + df[t]!;
  const docs = new Uint32Array(starts[terms]!);
  const tfs = new Uint16Array(starts[terms]!);
  const fill = starts.slice(0, terms);
  // Pass 2: rows in ascending order, so every posting list comes out sorted by doc id. A row's term
  // counts in a dense array, reset through the terms it touched (a Map per row cost most of the build).
  const tf = new Uint32Array(terms);
  const touched = new Uint32Array(longest);
  for (let d = 0; d < rows; d++) {
    let n = 0;
    for (let i = offsets[d]!; i < offsets[d + 1]!; i++) {
      const t = ids[i]!;
      if (tf[t]!++ === 0) touched[n++] = t;
    }
    for (let j = 0; j < n; j++) {
      const t = touched[j]!;
      const at = fill[t]!++;
      docs[at] = d;
      tfs[at] = Math.min(65535, tf[t]!);
      tf[t] = 0;
    }
  }
  return { vocab: new Map(vocab.map((w, i) => [w, i])), starts, docs, tfs, docLen, avgdl: rows ? total / rows : 0 };
}

/** Postings over documents given as lists of analysed terms (small collections: narratives, patterns). */
export function buildBm25FromTerms(docs: readonly (readonly string[])[]): Bm25Index {
  const vocab = new Map<string, number>();
  const offsets = new Uint32Array(docs.length + 1);
  const ids: number[] = [];
  docs.forEach((terms, d) => {
    for (const t of terms) {
      let id = vocab.get(t);
      if (id === undefined) vocab.set(t, (id = vocab.size));
      ids.push(id);
    }
    offsets[d + 1] = ids.length;
  });
  return buildBm25([...vocab.keys()], offsets, Uint32Array.from(ids));
}

/**
 * Postings from each document's distinct terms with their counts (ids into `vocab`, each once per
 * document, any order): the narrative map's member terms, where a term's "frequency" is how many of
 * a narrative's posts hold it. Only the terms some document holds enter the vocabulary.
 */
export function buildBm25FromCounts(
  vocab: readonly string[],
  docs: ReadonlyArray<{ ids: ArrayLike<number>; counts: ArrayLike<number> }>,
  docLen: ArrayLike<number>,
): Bm25Index {
  const df = new Uint32Array(vocab.length);
  for (const d of docs) for (let i = 0; i < d.ids.length; i++) df[d.ids[i]!]!++;
  const local = new Int32Array(vocab.length).fill(-1);
  const words: string[] = [];
  for (let t = 0; t < vocab.length; t++) if (df[t]! > 0) local[t] = words.push(vocab[t]!) - 1;
  const starts = new Uint32Array(words.length + 1);
  for (let t = 0; t < vocab.length; t++) if (local[t]! >= 0) starts[local[t]! + 1] = df[t]!;
  for (let t = 0; t < words.length; t++) starts[t + 1]! += starts[t]!;
  const postings = starts[words.length]!;
  const ids = new Uint32Array(postings);
  const tfs = new Uint16Array(postings);
  const fill = starts.slice(0, words.length);
  // Documents in ascending order: every posting list comes out sorted by document.
  docs.forEach((d, doc) => {
    for (let i = 0; i < d.ids.length; i++) {
      const at = fill[local[d.ids[i]!]!]!++;
      ids[at] = doc;
      tfs[at] = Math.min(65535, d.counts[i]!);
    }
  });
  const lens = Uint16Array.from({ length: docs.length }, (_, i) => Math.min(65535, docLen[i]!));
  const total = lens.reduce((a, b) => a + b, 0);
  return {
    vocab: new Map(words.map((w, i) => [w, i])),
    starts,
    docs: ids,
    tfs,
    docLen: lens,
    avgdl: docs.length ? total / docs.length : 0,
  };
}

export function idf(index: Bm25Index, df: number): number {
  return idfOf(index.docLen.length, df);
}

/** Lucene's idf of a term in `df` of `n` documents. */
export function idfOf(n: number, df: number): number {
  return Math.log(1 + (n - df + 0.5) / (df + 0.5));
}

/** Collection statistics a segment's search scores with instead of its own: the whole generation's. */
interface Bm25Stats {
  docs: number;
  avgdl: number;
  /** Document frequency of each query term over every segment. */
  df: Map<string, number>;
}

/**
 * A generation's postings: one BM25 index per time segment (core/snapshots/segments.ts), doc ids local to
 * it. A search scores every segment with the generation's statistics (document count, average
 * length, each term's document frequency summed over the segments), combined at query time as
 * Lucene does across its segments, so the scores are those of one index over every row. Rows of
 * posts deleted after their segment was built still count in the statistics (as in Lucene until a
 * merge) but are never returned.
 */
export interface SegmentedBm25 {
  segments: Array<{ id: string; firstRow: number; index: Bm25Index }>;
  docs: number;
  avgdl: number;
}

export function segmentedBm25(segments: SegmentedBm25['segments']): SegmentedBm25 {
  let docs = 0;
  let length = 0;
  for (const s of segments) {
    docs += s.index.docLen.length;
    length += s.index.avgdl * s.index.docLen.length;
  }
  return { segments, docs, avgdl: docs ? length / docs : 0 };
}

/**
 * searchBm25 over every segment (rows global), rows >= `start` only, masked rows (`deleted`, global)
 * never. One top-k runs through the segments in row order (the same k rows as each segment's top k
 * merged). `exhaustive`: the general merge (searchBm25's reference).
 */
export function searchSegments(
  b: SegmentedBm25,
  queryTerms: string[],
  k: number,
  start = 0,
  deleted: Uint8Array | null = null,
  exhaustive = false,
): Array<{ row: number; score: number }> {
  assertInt(k, 0, Number.MAX_SAFE_INTEGER, 'k');
  const stats = segmentStats(b, queryTerms);
  const top = new TopK(k);
  for (const s of b.segments) {
    const rows = s.index.docLen.length;
    if (s.firstRow + rows <= start) continue;
    const skip = deleted ? deleted.subarray(s.firstRow, s.firstRow + rows) : null;
    const minRow = Math.max(0, start - s.firstRow);
    const lists = termCursors(s.index, queryTerms, minRow, stats);
    (exhaustive ? scoreAll : scoreFast)(top, s.index, lists, null, skip, BM25_B / (stats.avgdl || 1), s.firstRow);
  }
  return top.sorted();
}

/** Each term's Lucene idf over the whole generation (its df summed over the segments). */
export function generationIdf(b: SegmentedBm25, terms: readonly string[]): Map<string, { df: number; idf: number }> {
  const out = new Map<string, { df: number; idf: number }>();
  for (const [t, df] of segmentStats(b, terms).df) out.set(t, { df, idf: idfOf(b.docs, df) });
  return out;
}

/** The generation's statistics for a query's terms: document count, average length, each term's df over the segments. */
function segmentStats(b: SegmentedBm25, queryTerms: readonly string[]): Bm25Stats {
  const df = new Map<string, number>();
  for (const t of new Set(queryTerms)) {
    let n = 0;
    for (const s of b.segments) {
      const id = s.index.vocab.get(t);
      if (id !== undefined) n += s.index.starts[id + 1]! - s.index.starts[id]!;
    }
    df.set(t, n);
  }
  return { docs: b.docs, avgdl: b.avgdl, df };
}

/** First position in docs[s..e) (sorted ascending) whose row is >= row. */
function firstAtLeast(docs: Uint32Array, s: number, e: number, row: number): number {
  let lo = s;
  let hi = e;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (docs[mid]! < row) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Whether document `row` contains any of `termIds` (binary search in each posting list). */
function containsAny(index: Bm25Index, termIds: readonly number[], row: number): boolean {
  for (const t of termIds) {
    const s = index.starts[t]!;
    const e = index.starts[t + 1]!;
    const i = firstAtLeast(index.docs, s, e, row);
    if (i < e && index.docs[i] === row) return true;
  }
  return false;
}

/** A is ranked above B: higher score, then lower row. */
const above = (sa: number, ra: number, sb: number, rb: number) => sa > sb || (sa === sb && ra < rb);

/** The best k (row, score) offered, by score then lower row: a min-heap (typed arrays) whose root is the weakest kept. */
class TopK {
  readonly hr: Int32Array;
  readonly hs: Float64Array;
  n = 0;
  constructor(readonly size: number) {
    this.hr = new Int32Array(size);
    this.hs = new Float64Array(size);
  }
  /** The score a row must beat to enter (rows come in ascending order, so a tie never enters); -Infinity until full. */
  get threshold(): number {
    return this.n < this.size ? -Infinity : this.hs[0]!;
  }
  offer(score: number, d: number): void {
    const { hr, hs, size } = this;
    if (size === 0) return;
    if (this.n < size) {
      // Sift up.
      let i = this.n++;
      while (i > 0) {
        const p = (i - 1) >>> 1;
        if (!above(hs[p]!, hr[p]!, score, d)) break;
        hs[i] = hs[p]!;
        hr[i] = hr[p]!;
        i = p;
      }
      hs[i] = score;
      hr[i] = d;
    } else if (above(score, d, hs[0]!, hr[0]!)) {
      // Replace the root and sift down.
      const n = this.n;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        if (l >= n) break;
        const r = l + 1;
        const m = r < n && above(hs[l]!, hr[l]!, hs[r]!, hr[r]!) ? r : l;
        if (!above(score, d, hs[m]!, hr[m]!)) break;
        hs[i] = hs[m]!;
        hr[i] = hr[m]!;
        i = m;
      }
      hs[i] = score;
      hr[i] = d;
    }
  }
  sorted(): Array<{ row: number; score: number }> {
    return Array.from(this.hr.subarray(0, this.n), (row, i) => ({ row, score: this.hs[i]! })).sort(
      (a, b) => b.score - a.score || a.row - b.row,
    );
  }
}

/** A query term's postings from a cursor on: position, end, weight (idf x (k1 + 1)). */
interface TermCursor {
  at: number;
  end: number;
  w: number;
}

/** One cursor per distinct query term the index has with postings from minRow on, in query order. */
function termCursors(index: Bm25Index, queryTerms: readonly string[], minRow: number, stats: Bm25Stats | null): TermCursor[] {
  const out: TermCursor[] = [];
  for (const word of new Set(queryTerms)) {
    const t = index.vocab.get(word);
    if (t === undefined) continue;
    const s = index.starts[t]!;
    const e = index.starts[t + 1]!;
    const i = minRow > 0 ? firstAtLeast(index.docs, s, e, minRow) : s;
    if (i >= e) continue;
    out.push({ at: i, end: e, w: (stats ? idfOf(stats.docs, stats.df.get(word) ?? e - s) : idf(index, e - s)) * (BM25_K1 + 1) });
  }
  return out;
}

/**
 * Query lists from which a segment is scored term at a time (scoreByTerm); from FEW_FROM_LISTS up to
 * it, they are merged document by document with their cursors in typed arrays (scoreFew); fewer, with
 * the cursors in locals (scoreOneOrTwo). At 1M posts, 900 planted, long and repeated
 * queries by their number of lists, ms a search term at a time -> merged: 3 lists 1.75 -> 1.16,
 * 5: 2.87 -> 2.07, 8: 8.23 -> 6.92, 9: 7.45 -> 7.01, 10-11: 6.70 -> 7.77, 12-13: 13.3 -> 18.8 (a
 * merge step visits every list, a term-at-a-time step one posting).
 *
 * Every posting of the query's lists is scored: no dynamic pruning. MaxScore with block-max bounds
 * (Turtle & Flood 1995, Ding & Suel 2011) ran here once for segments whose lists held 100k postings
 * or more; against these loops it never paid at 1M posts (the same rows; 200 long real-post
 * queries: slower by more than a fifth on 18 of 81 that reached it, faster on none; pairs of
 * frequent words 10-31 ms against 2.3-3.6; planted phrases 21 against 9.6), so it was removed.
 * Tried again term at a time (issue 48: the lists by bound, highest first, walked into
 * accumulators until the bounds left fell below the k-th partial sum, the rest looked up by
 * galloping search for the rows that could still enter, exact to the bit): at 100k posts it left
 * 28% of the long mix's postings unwalked (62% would be the most, with the final threshold known
 * from the start) and ran slower than these loops for every number of lists from 4 to 12
 * (interleaved in one process, 300 queries a mix: long 2.5 against 3.4 ms, planted 0.58 against
 * 0.81): posts are short, a frequent word's part varies little from post to post, so the bounds
 * stay close to the parts and prune little.
 */
const BY_TERM_FROM_LISTS = 10;
const FEW_FROM_LISTS = 3;

/** Offers every row of one index's lists (accepted, not skipped) that can enter `top`, at row + rowOffset. */
type ScoreLists = (
  top: TopK,
  index: Bm25Index,
  lists: readonly TermCursor[],
  accept: ((row: number) => boolean) | null,
  skip: Uint8Array | null,
  lenNorm: number,
  rowOffset: number,
) => void;

/** ScoreLists without a row filter (every row accepted). */
type ScoreUnfiltered = (
  top: TopK,
  index: Bm25Index,
  lists: readonly TermCursor[],
  skip: Uint8Array | null,
  lenNorm: number,
  rowOffset: number,
) => void;

/** The fastest exact scoring of one segment's lists (each row's parts summed from zero in query order, as scoreAll does). */
const scoreFast: ScoreLists = (top, index, lists, accept, skip, lenNorm, rowOffset) => {
  if (lists.length === 0 || top.size === 0) return;
  // A row filter (searchBm25's function filter, not a search path of the service) takes the general loops.
  if (accept) (lists.length >= FEW_FROM_LISTS ? scoreByTerm : scoreAll)(top, index, lists, accept, skip, lenNorm, rowOffset);
  else if (lists.length >= BY_TERM_FROM_LISTS) scoreByTerm(top, index, lists, null, skip, lenNorm, rowOffset);
  else if (lists.length >= FEW_FROM_LISTS) scoreFew(top, index, lists, skip, lenNorm, rowOffset);
  else scoreOneOrTwo(top, index, lists, skip, lenNorm, rowOffset);
};

/** Score every posting of the lists, document at a time, each row's parts summed in query order. */
const scoreAll: ScoreLists = (top, index, lists, accept, skip, lenNorm, rowOffset) => {
  const { docs, tfs, docLen } = index;
  const at = lists.map((l) => l.at);
  const end = lists.map((l) => l.end);
  const weight = lists.map((l) => l.w);
  for (;;) {
    let d = 0xffffffff;
    for (let l = 0; l < at.length; l++) if (at[l]! < end[l]! && docs[at[l]!]! < d) d = docs[at[l]!]!;
    if (d === 0xffffffff) return;
    let score = 0;
    for (let l = 0; l < at.length; l++) {
      const i = at[l]!;
      if (i < end[l]! && docs[i] === d) {
        const tf = tfs[i]!;
        score += (weight[l]! * tf) / (tf + BM25_K1 * (1 - BM25_B + lenNorm * docLen[d]!));
        at[l] = i + 1;
      }
    }
    if ((accept && !accept(d)) || (skip && skip[d])) continue;
    top.offer(score, rowOffset + d);
  }
};

/**
 * scoreAll for one or two lists without a row filter, as straight-line code: the cursors in locals,
 * and a row offered only when it can enter `top` (rows come in ascending order, so a row that only
 * ties the weakest kept never enters). The general merge spent about 35 ns a posting on its arrays
 * of cursors and a heap call per row; this one about 3 (frequent words at 1M posts: 1.55 -> 0.58 ms
 * a search, the same rows and scores: each row's parts summed from zero in query order).
 */
const scoreOneOrTwo: ScoreUnfiltered = (top, index, lists, skip, lenNorm, rowOffset) => {
  const { docs, tfs, docLen } = index;
  let theta = top.threshold;
  // One list and two are written out apart: one loop with a closure and an empty second list ran at twice the time.
  if (lists.length === 1) {
    const w = lists[0]!.w;
    for (let i = lists[0]!.at, e = lists[0]!.end; i < e; i++) {
      const d = docs[i]!;
      const tf = tfs[i]!;
      const score = 0 + (w * tf) / (tf + BM25_K1 * (1 - BM25_B + lenNorm * docLen[d]!));
      if (score <= theta || (skip !== null && skip[d] !== 0)) continue;
      top.offer(score, rowOffset + d);
      theta = top.threshold;
    }
    return;
  }
  const wa = lists[0]!.w;
  const wb = lists[1]!.w;
  const ie = lists[0]!.end;
  const je = lists[1]!.end;
  let i = lists[0]!.at;
  let j = lists[1]!.at;
  while (i < ie || j < je) {
    const di = i < ie ? docs[i]! : 0xffffffff;
    const dj = j < je ? docs[j]! : 0xffffffff;
    const d = di <= dj ? di : dj;
    let score = 0;
    if (di === d) {
      const tf = tfs[i++]!;
      score += (wa * tf) / (tf + BM25_K1 * (1 - BM25_B + lenNorm * docLen[d]!));
    }
    if (dj === d) {
      const tf = tfs[j++]!;
      score += (wb * tf) / (tf + BM25_K1 * (1 - BM25_B + lenNorm * docLen[d]!));
    }
    if (score <= theta || (skip !== null && skip[d] !== 0)) continue;
    top.offer(score, rowOffset + d);
    theta = top.threshold;
  }
};

/**
 * scoreAll for three or more lists without a row filter: the cursors' positions, ends and current
 * rows in typed arrays, one pass over them a row that scores it and finds the next row, and a row
 * offered only when it can enter `top` (rows ascend). The same rows and scores: each row's parts
 * summed from zero in query order.
 */
const scoreFew: ScoreUnfiltered = (top, index, lists, skip, lenNorm, rowOffset) => {
  const { docs, tfs, docLen } = index;
  const k = lists.length;
  const at = new Int32Array(k);
  const end = new Int32Array(k);
  const w = new Float64Array(k);
  const cur = new Uint32Array(k); // the row at each cursor, 0xffffffff past its end
  let d = 0xffffffff;
  for (let l = 0; l < k; l++) {
    const c = lists[l]!;
    at[l] = c.at;
    end[l] = c.end;
    w[l] = c.w;
    cur[l] = c.at < c.end ? docs[c.at]! : 0xffffffff;
    if (cur[l]! < d) d = cur[l]!;
  }
  let theta = top.threshold;
  while (d !== 0xffffffff) {
    let score = 0;
    let next = 0xffffffff;
    for (let l = 0; l < k; l++) {
      let c = cur[l]!;
      if (c === d) {
        const i = at[l]!;
        const tf = tfs[i]!;
        score += (w[l]! * tf) / (tf + BM25_K1 * (1 - BM25_B + lenNorm * docLen[d]!));
        at[l] = i + 1;
        c = i + 1 < end[l]! ? docs[i + 1]! : 0xffffffff;
        cur[l] = c;
      }
      if (c < next) next = c;
    }
    const row = d;
    d = next;
    if (score <= theta || (skip !== null && skip[row] !== 0)) continue;
    top.offer(score, rowOffset + row);
    theta = top.threshold;
  }
};

/** Per-row score accumulators of scoreByTerm, reused (all zero between calls); grown to the largest segment searched. */
let accumulators = new Float64Array(0);
/** The rows scoreByTerm scored, where it lists them. */
let touched = new Int32Array(0);

/**
 * Score every posting of the lists term at a time into per-row accumulators, then offer the rows
 * scored. Each row's parts are added in query order starting from zero, as scoreAll sums them, so
 * the scores are bit for bit scoreAll's (and `top` keeps the same k rows whatever order they come
 * in: its order is total). Walking each list straight through with one add per posting is several
 * times faster than merging many lists document by document: long queries of common words.
 */
const scoreByTerm: ScoreLists = function (top, index, lists, accept, skip, lenNorm, rowOffset) {
  const { docs, tfs, docLen } = index;
  if (accumulators.length < docLen.length) accumulators = new Float64Array(docLen.length);
  const acc = accumulators;
  let lo = docLen.length;
  let hi = -1;
  let postings = 0;
  for (const l of lists) {
    if (l.at >= l.end) continue;
    postings += l.end - l.at;
    if (docs[l.at]! < lo) lo = docs[l.at]!;
    if (docs[l.end - 1]! > hi) hi = docs[l.end - 1]!;
  }
  // Few postings over a long span of rows: the rows scored are listed, not found by a scan of the span.
  if (postings * 8 < hi - lo) {
    if (touched.length < postings) touched = new Int32Array(postings * 2);
    let n = 0;
    for (const l of lists) {
      const w = l.w;
      for (let i = l.at; i < l.end; i++) {
        const d = docs[i]!;
        const tf = tfs[i]!;
        if (acc[d] === 0) touched[n++] = d;
        acc[d] = acc[d]! + (w * tf) / (tf + BM25_K1 * (1 - BM25_B + lenNorm * docLen[d]!));
      }
    }
    // Listed in the order first scored, not by row: a row that ties the weakest kept may still enter.
    let theta = top.threshold;
    let j = 0;
    try {
      for (; j < n; j++) {
        const d = touched[j]!;
        const score = acc[d]!;
        acc[d] = 0;
        if (score < theta || (accept && !accept(d)) || (skip && skip[d])) continue;
        top.offer(score, rowOffset + d);
        theta = top.threshold;
      }
    } finally {
      for (j++; j < n; j++) acc[touched[j]!] = 0; // a filter threw: the next search starts from zeros all the same
    }
    return;
  }
  for (const l of lists) {
    const w = l.w;
    for (let i = l.at; i < l.end; i++) {
      const d = docs[i]!;
      const tf = tfs[i]!;
      acc[d] = acc[d]! + (w * tf) / (tf + BM25_K1 * (1 - BM25_B + lenNorm * docLen[d]!));
    }
  }
  // Every part is positive (idf > 0, tf > 0): a row scored is a row above zero; each is reset as it
  // is read. Rows ascend here, so one that only ties the weakest kept never enters.
  let theta = top.threshold;
  let d = lo;
  try {
    for (; d <= hi; d++) {
      const score = acc[d]!;
      if (score === 0) continue;
      acc[d] = 0;
      if (score <= theta || (accept && !accept(d)) || (skip && skip[d])) continue;
      top.offer(score, rowOffset + d);
      theta = top.threshold;
    }
  } finally {
    if (d <= hi) acc.fill(0, d, hi + 1); // a filter threw: the next search starts from zeros all the same
  }
};

/**
 * Score every row that contains a query term; returns the top `k` (row, score) by score, ties by
 * row id. The filter applies inside retrieval, before the top-k cut: a number is the first row
 * accepted (a time window: posting lists are sorted by row, so older rows are skipped by binary
 * search, not visited); a function accepts rows one by one. Every posting of the query terms'
 * lists is scored, by the loop fastest for their number (scoreFast); `exhaustive` merges them by
 * the general loop instead (scoreAll): the reference the tests hold the fast loops equal to (the
 * same k rows and scores).
 */
export function searchBm25(
  index: Bm25Index,
  queryTerms: string[],
  k: number,
  filter?: number | ((row: number) => boolean),
  opts: { stats?: Bm25Stats; skip?: Uint8Array; exhaustive?: boolean } = {},
): Array<{ row: number; score: number }> {
  assertInt(k, 0, Number.MAX_SAFE_INTEGER, 'k');
  const minRow = typeof filter === 'number' ? filter : 0;
  assertInt(minRow, 0, index.docLen.length, 'first row');
  const accept = typeof filter === 'function' ? filter : null;
  const stats = opts.stats ?? null;
  const top = new TopK(k);
  const lenNorm = BM25_B / ((stats ? stats.avgdl : index.avgdl) || 1);
  const lists = termCursors(index, queryTerms, minRow, stats);
  (opts.exhaustive ? scoreAll : scoreFast)(top, index, lists, accept, opts.skip ?? null, lenNorm, 0);
  return top.sorted();
}

// ---- persistence: [u32 header length][header JSON][vocab text padded][starts][docs][tfs][docLen]

export async function saveBm25(index: Bm25Index, file: string): Promise<void> {
  const words = new Array<string>(index.vocab.size);
  for (const [w, i] of index.vocab) words[i] = w;
  const text = Buffer.from(words.join('\n'), 'utf8');
  const header = Buffer.from(
    JSON.stringify({
      terms: words.length,
      postings: index.docs.length,
      rows: index.docLen.length,
      avgdl: index.avgdl,
      vocabBytes: text.length,
      k1: BM25_K1,
      b: BM25_B,
    }),
  );
  const hl = Buffer.alloc(4);
  hl.writeUInt32LE(header.length);
  const pad = (n: number) => Buffer.alloc((4 - (n % 4)) % 4);
  const parts = [
    hl,
    header,
    pad(4 + header.length),
    text,
    pad(text.length),
    Buffer.from(index.starts.buffer, index.starts.byteOffset, index.starts.byteLength),
    Buffer.from(index.docs.buffer, index.docs.byteOffset, index.docs.byteLength),
    Buffer.from(index.tfs.buffer, index.tfs.byteOffset, index.tfs.byteLength),
    pad(index.tfs.byteLength),
    Buffer.from(index.docLen.buffer, index.docLen.byteOffset, index.docLen.byteLength),
  ];
  await writeFileAtomic(file, Buffer.concat(parts));
}

export async function loadBm25(file: string): Promise<Bm25Index> {
  return parseBm25(await fs.readFile(file));
}

/**
 * The index of a bm25.bin image. When the image lives in a SharedArrayBuffer, the postings are
 * views of it (threads given the same image share them, copying nothing); otherwise they are
 * copied out, aligned.
 */
export function parseBm25(buf: Uint8Array): Bm25Index {
  const bytes = Buffer.from(buf.buffer, buf.byteOffset, buf.byteLength);
  const hl = bytes.readUInt32LE(0);
  const h = JSON.parse(bytes.subarray(4, 4 + hl).toString('utf8')) as {
    terms: number;
    postings: number;
    rows: number;
    avgdl: number;
    vocabBytes: number;
  };
  const al = (n: number) => n + ((4 - (n % 4)) % 4);
  let at = al(4 + hl);
  const words = h.terms
    ? bytes
        .subarray(at, at + h.vocabBytes)
        .toString('utf8')
        .split('\n')
    : [];
  at = al(at + h.vocabBytes);
  let body: Uint8Array;
  if (buf.buffer instanceof SharedArrayBuffer && (buf.byteOffset + at) % 4 === 0) body = buf.subarray(at);
  else {
    body = new Uint8Array(buf.length - at);
    body.set(buf.subarray(at));
  }
  let o = body.byteOffset;
  const starts = new Uint32Array(body.buffer, o, h.terms + 1);
  o += starts.byteLength;
  const docs = new Uint32Array(body.buffer, o, h.postings);
  o += docs.byteLength;
  const tfs = new Uint16Array(body.buffer, o, h.postings);
  o = body.byteOffset + al(o - body.byteOffset + tfs.byteLength);
  const docLen = new Uint16Array(body.buffer, o, h.rows);
  return { vocab: new Map(words.map((w, i) => [w, i])), starts, docs, tfs, docLen, avgdl: h.avgdl };
}

/**
 * The document count of a bm25.bin and the document frequency of each of `wanted` it holds, read
 * without building the whole index (an incremental run's themes need a few terms' frequencies in
 * every segment).
 */
export async function readDocumentFrequencies(
  file: string,
  wanted: ReadonlySet<string>,
): Promise<{ docs: number; df: Map<string, number> }> {
  const bytes = await fs.readFile(file);
  const hl = bytes.readUInt32LE(0);
  const h = JSON.parse(bytes.subarray(4, 4 + hl).toString('utf8')) as { terms: number; rows: number; vocabBytes: number };
  const al = (n: number) => n + ((4 - (n % 4)) % 4);
  const at = al(4 + hl);
  const words = h.terms
    ? bytes
        .subarray(at, at + h.vocabBytes)
        .toString('utf8')
        .split('\n')
    : [];
  const startsAt = al(at + h.vocabBytes);
  const df = new Map<string, number>();
  words.forEach((w, t) => {
    if (wanted.has(w)) df.set(w, bytes.readUInt32LE(startsAt + 4 * (t + 1)) - bytes.readUInt32LE(startsAt + 4 * t));
  });
  return { docs: h.rows, df };
}

/** Each segment's ids of `terms` (those it has). */
export function segmentTermIds(b: SegmentedBm25, terms: readonly string[]): number[][] {
  return b.segments.map((s) => terms.map((t) => s.index.vocab.get(t)).filter((t): t is number => t !== undefined));
}

/** Whether global row `row` contains any of the terms whose ids per segment are `ids` (segmentTermIds). */
export function segmentsContainAny(b: SegmentedBm25, ids: readonly number[][], row: number): boolean {
  let lo = 0;
  let hi = b.segments.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (b.segments[mid]!.firstRow <= row) lo = mid;
    else hi = mid - 1;
  }
  const s = b.segments[lo];
  return (
    s !== undefined && row >= s.firstRow && row - s.firstRow < s.index.docLen.length && containsAny(s.index, ids[lo]!, row - s.firstRow)
  );
}
