// Which time segments the next generation has, which of them this run builds, and where each row's
// per-post data comes from (docs/operations.md, "Incremental runs"; the layout: core/snapshots/segments.ts).
//
// A full run cuts the snapshot's posts at UTC day boundaries into segments of about SEGMENT_ROWS
// rows (a segment closes at the first day boundary after reaching SEGMENT_ROWS); what is left is the
// head, the open-ended newest segment. Every row is computed.
//
// An incremental run starts from the served generation's segments. Each post goes to the segment
// whose span holds its published_at. Then, per segment:
//   - nothing new: reused as it is (hard-linked); rows of posts deleted since are masked;
//   - new posts that all sort after its last row (the usual case: posts newer than the last run):
//     appended. The segment is written again with its old rows first, unchanged (their vectors,
//     terms, scores copied; deleted ones still masked), and its graphs are extended by the new
//     points instead of rebuilt: the cost follows the new posts;
//   - new posts that sort inside it (late posts): rebuilt from its live rows (old rows' data
//     copied, new rows computed; its graphs rebuilt): the cost follows the segment's size;
//   - over MASKED_MAX of its rows deleted: rebuilt without them (compaction of deletions).
// The head, once it holds SEGMENT_ROWS rows or more, is sealed at the as-of (its span ends there;
// later posts start a new head). Two neighbouring sealed segments both under half of SEGMENT_ROWS
// (left by a full run's cut or by dropped deletions) are merged into one rebuilt segment.
//
// The plan is the features stage's output to the later stages (SEGMENT_PLAN: kept for the run and in
// artifacts/segment-plan.json, its invariants asserted: plan-output.ts), and each live post's place to the work store's table
// plan_rows(uuid, row_id, segment, local_row, src_segment, src_row, compute): its global row, its
// segment and row in it, where its data comes from (a segment of the served generation and its row
// there) or compute = true (this run analyses and embeds it).
import path from 'node:path';
import { assert } from '../../core/infra/assert.ts';
import { sqlString, type DuckDB } from '../../core/infra/duckdb.ts';
import { generationDir, readCurrent, readManifest, type Manifest } from '../../core/snapshots/generations.ts';
import { segmentDir, segmentId, segmentNumber, type SegmentInfo } from '../../core/snapshots/segments.ts';
import { DAY_MS } from '../../core/snapshots/windows.ts';
import { snapshotWhere } from './snapshot-rows.ts';
import type { StageContext } from '../context/stage-context.ts';

/** A segment with more than this share of its rows deleted is rebuilt without them. */
const MASKED_MAX = 0.2;

export interface PlannedSegment extends SegmentInfo {
  /** reuse: the served generation's segment as it is; build: written by this run. */
  action: 'reuse' | 'build';
  /** build: the served segment whose rows are this one's first rows, in order (appended to); null: built from scratch. */
  base: string | null;
  /** Rows of the base (0 without one). */
  baseRows: number;
  firstRow: number;
  /** Global rows of posts deleted since the segment (or its base) was built: masked until it is rebuilt. */
  masked: number[];
}

export interface SegmentPlan {
  mode: 'full' | 'incremental';
  /** Why the run is full (null: incremental). */
  fullBecause: string | null;
  /** ISO text (segment-plan.json's name). */
  asOf: string;
  /** The served generation the plan starts from (reused segments are read from its folder). */
  previous: { generation: string; dir: string } | null;
  segments: PlannedSegment[];
  rows: number;
  /** Live rows (rows minus masked). */
  liveRows: number;
  /** Rows this run computes (new posts; every post on a full run). */
  computeRows: number;
  /** The highest segment number used so far in this data directory. */
  lastSegment: number;
}

interface PlanOptions {
  full: boolean;
  segmentRows: number;
  /** Why the embedder must be refitted (which makes the run full), or null (refit-rule.ts). */
  refitBecause: (previous: Manifest, rows: number, asOf: Date) => string | null;
}

const dayStart = (t: number) => Math.floor(t / DAY_MS) * DAY_MS;
const iso = (t: number) => new Date(t).toISOString();

interface Posts {
  n: number;
  t: Float64Array;
  /** The uuids the plan reads (new posts', posts at a segment's last instant, segments' last posts), by post. */
  uuid: Map<number, string>;
  /** Incremental runs: the served segment (an index into its segments) and row that hold each post, or -1. */
  heldSegment: Int32Array;
  heldRow: Int32Array;
}

/** The snapshot's live posts in (published_at, uuid) order; the work store's plan_posts numbers them (i) in that order. */
async function snapshotPosts(db: DuckDB, asOfIso: string): Promise<Posts> {
  await db.run(`CREATE OR REPLACE TEMP TABLE plan_posts AS
    SELECT (row_number() OVER (ORDER BY published_at, uuid) - 1)::INTEGER AS i, uuid, epoch_ms(published_at)::DOUBLE AS t
    FROM posts WHERE ${snapshotWhere(asOfIso)}`);
  const { t } = await db.numbers(`SELECT t FROM plan_posts ORDER BY i`);
  const n = t?.length ?? 0;
  return {
    n,
    t: (t as Float64Array | undefined) ?? new Float64Array(0),
    uuid: new Map(),
    heldSegment: new Int32Array(n).fill(-1),
    heldRow: new Int32Array(n).fill(-1),
  };
}

/** Read the uuids of the given posts into posts.uuid (a million uuids as JS strings cost most of a second: only these). */
async function readUuids(db: DuckDB, posts: Posts, which: Iterable<number>): Promise<void> {
  const wanted = [...new Set(which)].filter((i) => !posts.uuid.has(i));
  for (let at = 0; at < wanted.length; at += 50_000) {
    const part = wanted.slice(at, at + 50_000);
    const rows = await db.all<{ i: number; uuid: string }>(`SELECT i, uuid FROM plan_posts WHERE i IN (${part.join(',')})`);
    for (const r of rows) posts.uuid.set(Number(r.i), r.uuid);
  }
}

/**
 * Where the served generation holds each snapshot post: its segments' uuids.txt files read and
 * joined with plan_posts inside DuckDB (a million uuids in JS sets and maps cost seconds).
 */
async function locateHeld(db: DuckDB, prev: Previous, posts: Posts): Promise<void> {
  if (prev.segments.length === 0) return;
  const files = prev.segments.map(
    (s, k) =>
      `SELECT ${k} AS seg, string_split(content, chr(10)) AS l FROM read_text(${sqlString(path.join(segmentDir(prev.dir, s.id), 'uuids.txt'))})`,
  );
  await db.run(`CREATE OR REPLACE TEMP TABLE held_rows AS
    SELECT seg, (pos - 1)::INTEGER AS row, uuid FROM (SELECT seg, unnest(l) AS uuid, generate_subscripts(l, 1) AS pos FROM (${files.join(' UNION ALL ')}))
    WHERE uuid <> ''`);
  const counts = await db.numbers(`SELECT seg::INTEGER AS seg, count(*)::INTEGER AS n FROM held_rows GROUP BY seg`);
  const held = new Int32Array(prev.segments.length);
  counts.seg!.forEach((k, j) => (held[k] = counts.n![j]!));
  prev.segments.forEach((s, k) =>
    assert(
      held[k] === s.rows,
      () => `segment ${s.id} of generation ${prev.generation} lists ${held[k]} uuids, its manifest ${s.rows} rows`,
    ),
  );
  const c = await db.numbers(`SELECT p.i, h.seg::INTEGER AS seg, h.row FROM plan_posts p JOIN held_rows h USING (uuid)`);
  await db.run(`DROP TABLE held_rows`);
  for (let j = 0; j < c.i!.length; j++) {
    posts.heldSegment[c.i![j]!] = c.seg![j]!;
    posts.heldRow[c.i![j]!] = c.row![j]!;
  }
}

/** (t, uuid) order, the snapshot's. */
const after = (t: number, uuid: string, last: { t: string; uuid: string }) => {
  const lt = Date.parse(last.t);
  return t > lt || (t === lt && uuid > last.uuid);
};

interface Span {
  from: number;
  to: number | null;
  /** Indexes into the snapshot's posts. */
  first: number;
  end: number;
}

/** Cut posts [0, n) at UTC day boundaries into spans of at least `minRows`; the rest (fewer) is the open-ended head. */
function cutByDays(t: Float64Array, n: number, minRows: number): Span[] {
  const out: Span[] = [];
  let start = 0;
  let i = 0;
  while (i < n) {
    const day = dayStart(t[i]!);
    while (i < n && dayStart(t[i]!) === day) i++;
    if (i - start >= minRows && i < n) {
      out.push({ from: dayStart(t[start]!), to: dayStart(t[i]!), first: start, end: i });
      start = i;
    }
  }
  out.push({ from: start < n ? dayStart(t[start]!) : 0, to: null, first: start, end: n });
  return out;
}

interface Previous {
  generation: string;
  dir: string;
  manifest: Manifest;
  segments: SegmentInfo[];
}

async function loadPrevious(ctx: StageContext): Promise<Previous | null> {
  const gen = await readCurrent(ctx.layout);
  if (!gen) return null;
  const manifest = await readManifest(ctx.layout, gen);
  const dir = generationDir(ctx.layout, gen);
  return { generation: gen, dir, manifest, segments: manifest.segments ?? [] };
}

/** Why this run cannot be incremental, or null. */
function fullBecause(o: PlanOptions, prev: Previous | null, asOf: Date, rows: number): string | null {
  if (o.full) return 'asked for (--full)';
  if (!prev) return 'no generation published yet';
  if (!prev.manifest.segments?.length) return `generation ${prev.generation} has no segments (an older layout)`;
  if (asOf.getTime() < Date.parse(prev.manifest.as_of)) return `the as-of is before generation ${prev.generation}'s`;
  return o.refitBecause(prev.manifest, rows, asOf);
}

/** A planned segment before its rows are numbered. */
interface Draft {
  from: number;
  to: number | null;
  /** The served segment kept (reuse) or appended to (build with a base). */
  prev: SegmentInfo | null;
  action: 'reuse' | 'build';
  /** Live posts of its span (indexes into the snapshot's posts), in order. */
  first: number;
  end: number;
}

/** The incremental plan's drafts: each served segment reused, appended to or rebuilt (see the header). */
function incrementalDrafts(prev: Previous, posts: Posts, segmentRows: number): Draft[] {
  const segs: Array<SegmentInfo | null> = [...prev.segments];
  const lastPrev = prev.segments[prev.segments.length - 1]!;
  // After a sealed last segment, newer posts start a new head.
  if (lastPrev.to !== null) segs.push(null);
  const starts = segs.map((s) => Date.parse(s ? s.from : lastPrev.to!));
  const n = posts.n;
  const bounds: Array<{ first: number; end: number }> = [];
  let p = 0;
  for (let k = 0; k < segs.length; k++) {
    const first = p;
    const nextStart = k + 1 < segs.length ? starts[k + 1]! : Infinity;
    while (p < n && posts.t[p]! < nextStart) p++;
    bounds.push({ first, end: p });
  }
  const drafts: Draft[] = segs.map((s, k) => {
    const { first, end } = bounds[k]!;
    const from = Math.min(s ? Date.parse(s.from) : starts[k]!, end > first ? posts.t[first]! : Infinity);
    const to = s ? (s.to === null ? null : Date.parse(s.to)) : null;
    if (!s) return { from, to, prev: null, action: 'build', first, end };
    let fresh = 0;
    let appendable = true;
    for (let i = first; i < end; i++) {
      if (posts.heldSegment[i] === k) continue;
      fresh++;
      if (!s.last || !after(posts.t[i]!, posts.uuid.get(i)!, s.last)) appendable = false;
    }
    const live = end - first - fresh;
    const masked = s.rows - live;
    const tooMasked = s.rows > 0 && masked / s.rows > MASKED_MAX;
    if (fresh === 0 && !tooMasked) return { from: Date.parse(s.from), to, prev: s, action: 'reuse', first, end };
    if (appendable && !tooMasked) return { from: Date.parse(s.from), to, prev: s, action: 'build', first, end };
    return { from, to, prev: null, action: 'build', first, end };
  });
  // Compaction of small sealed neighbours: merged into one segment built from scratch.
  for (let i = 0; i + 1 < drafts.length; i++) {
    const a = drafts[i]!;
    const b = drafts[i + 1]!;
    if (a.to === null || b.to === null) continue;
    const ra = a.end - a.first;
    const rb = b.end - b.first;
    if (ra < segmentRows / 2 && rb < segmentRows / 2 && ra + rb <= segmentRows) {
      drafts.splice(i, 2, { from: a.from, to: b.to, prev: null, action: 'build', first: a.first, end: b.end });
      i--;
    }
  }
  return drafts;
}

/**
 * Each live post's row in the plan (plan_rows), as numbers: the post (its place in plan_posts), its
 * global row, its segment and row in it, and the segment and row its data comes from (-1: computed).
 * Segments are indexes into `segmentIds`. No object or string per post: a million of each cost seconds.
 */
class PlanRows {
  readonly post: Int32Array;
  readonly row: Int32Array;
  readonly segment: Int32Array;
  readonly local: Int32Array;
  readonly srcSegment: Int32Array;
  readonly srcRow: Int32Array;
  readonly segmentIds: string[] = [];
  private readonly ids = new Map<string, number>();
  length = 0;
  constructor(n: number) {
    this.post = new Int32Array(n);
    this.row = new Int32Array(n);
    this.segment = new Int32Array(n);
    this.local = new Int32Array(n);
    this.srcSegment = new Int32Array(n);
    this.srcRow = new Int32Array(n);
  }

  private idOf(segment: string): number {
    let k = this.ids.get(segment);
    if (k === undefined) this.ids.set(segment, (k = this.segmentIds.push(segment) - 1));
    return k;
  }

  push(post: number, row: number, segment: string, local: number, srcSegment: string | null, srcRow: number | null): void {
    const k = this.length++;
    this.post[k] = post;
    this.row[k] = row;
    this.segment[k] = this.idOf(segment);
    this.local[k] = local;
    this.srcSegment[k] = srcSegment === null ? -1 : this.idOf(srcSegment);
    this.srcRow[k] = srcRow ?? -1;
  }
}

export async function planSegments(ctx: StageContext, o: PlanOptions): Promise<SegmentPlan> {
  const db = await ctx.db();
  const asOfIso = ctx.asOf.toISOString();
  const posts = await snapshotPosts(db, asOfIso);
  const n = posts.n;
  const prev = await loadPrevious(ctx);
  const because = fullBecause(o, prev, ctx.asOf, n);
  let lastSegment = prev
    ? Math.max(0, ...(prev.manifest.segments ?? []).map((s) => segmentNumber(s.id)), prev.manifest.last_segment ?? 0)
    : 0;
  const incremental = because === null && prev ? prev : null;
  const drafts = dropEmptySpans(
    incremental ? await incrementalPlanDrafts(db, incremental, posts, o.segmentRows) : fullDrafts(posts, o.segmentRows),
  );
  await readUuids(
    db,
    posts,
    drafts.filter((d) => d.end > d.first).map((d) => d.end - 1),
  );
  const segments: PlannedSegment[] = [];
  const rows = new PlanRows(n);
  let at = 0;
  let computeRows = 0;
  for (const d of drafts) {
    const seg = draftSegment(d, d.action === 'reuse' ? d.prev!.id : segmentId(++lastSegment), at);
    computeRows += d.prev ? placeOnServed(d, seg, incremental!, posts, rows) : placeAnew(d, seg, incremental, posts, rows);
    // The head, once big enough, is sealed at the as-of: later posts start a new head.
    if (seg.to === null && seg.action === 'build' && seg.rows >= o.segmentRows && d === drafts[drafts.length - 1] && because === null) {
      seg.to = iso(ctx.asOf.getTime() + 1);
    }
    segments.push(seg);
    at += seg.rows;
  }
  assert(rows.length === n, () => `the plan places ${rows.length} of the snapshot's ${n} posts`);
  const plan: SegmentPlan = {
    mode: because === null ? 'incremental' : 'full',
    fullBecause: because,
    asOf: asOfIso,
    previous: prev ? { generation: prev.generation, dir: prev.dir } : null,
    segments,
    rows: at,
    liveRows: n,
    computeRows,
    lastSegment,
  };
  await writePlanRows(db, rows);
  return plan;
}

/** A full run's drafts: the posts cut at day boundaries, every segment built. */
function fullDrafts(posts: Posts, segmentRows: number): Draft[] {
  return cutByDays(posts.t, posts.n, segmentRows).map((s) => ({ ...s, prev: null, action: 'build' as const }));
}

/** An incremental run's drafts, once each post's served segment and row are known (and the uuids the drafts compare). */
async function incrementalPlanDrafts(db: DuckDB, prev: Previous, posts: Posts, segmentRows: number): Promise<Draft[]> {
  await locateHeld(db, prev, posts);
  // incrementalDrafts compares (t, uuid) with a segment's last post for posts not held: new ones, or at its last instant.
  const lastT = new Set(prev.segments.map((s) => (s.last ? Date.parse(s.last.t) : NaN)));
  const compared: number[] = [];
  for (let i = 0; i < posts.n; i++) if (posts.heldSegment[i]! < 0 || lastT.has(posts.t[i]!)) compared.push(i);
  await readUuids(db, posts, compared);
  return incrementalDrafts(prev, posts, segmentRows);
}

/** A span left without posts is dropped (its time joins a neighbour's), unless it is all there is. */
function dropEmptySpans(drafts: Draft[]): Draft[] {
  for (let i = drafts.length - 1; i >= 0 && drafts.length > 1; i--) {
    const d = drafts[i]!;
    if (d.prev || d.end > d.first) continue;
    drafts.splice(i, 1);
    if (i > 0) drafts[i - 1]!.to = d.to;
    else drafts[0]!.from = d.from;
  }
  return drafts;
}

/** A draft's segment, named `id`, from global row `at`, before its rows are placed. */
function draftSegment(d: Draft, id: string, at: number): PlannedSegment {
  const reused = d.action === 'reuse' ? d.prev! : null;
  return {
    id,
    from: iso(d.from === Infinity ? 0 : d.from),
    to: d.to === null ? null : iso(d.to),
    rows: 0,
    // A reused segment keeps its graphs, and so their points (a built one's are counted by the index stage).
    textPoints: reused ? reused.textPoints : 0,
    visualPoints: reused ? reused.visualPoints : 0,
    // Its window tails too, until the index stage decides which the new windows need.
    textTails: reused ? (reused.textTails ?? []) : [],
    builtIn: reused ? reused.builtIn : null,
    last: reused ? reused.last : null,
    action: d.action,
    base: d.action === 'build' && d.prev ? d.prev.id : null,
    baseRows: d.action === 'build' && d.prev ? d.prev.rows : 0,
    firstRow: at,
    masked: [],
  };
}

/** The (t, uuid) of a draft's last post, or null without posts. */
function lastOf(d: Draft, posts: Posts): SegmentInfo['last'] {
  return d.end > d.first ? { t: iso(posts.t[d.end - 1]!), uuid: posts.uuid.get(d.end - 1)! } : null;
}

/**
 * A segment reused or appended to: the served rows keep their places, deleted ones masked; new
 * posts follow. Returns how many rows this run computes.
 */
function placeOnServed(d: Draft, seg: PlannedSegment, prev: Previous, posts: Posts, rows: PlanRows): number {
  const served = d.prev!;
  const at = seg.firstRow;
  const k = prev.segments.indexOf(served);
  const held = (p: number) => (posts.heldSegment[p] === k ? posts.heldRow[p]! : -1);
  const isLive = new Uint8Array(served.rows);
  for (let p = d.first; p < d.end; p++) if (held(p) >= 0) isLive[held(p)] = 1;
  isLive.forEach((live, i) => {
    if (!live) seg.masked.push(at + i);
  });
  let next = served.rows;
  let computed = 0;
  for (let p = d.first; p < d.end; p++) {
    const i = held(p);
    if (i >= 0) rows.push(p, at + i, seg.id, i, served.id, i);
    else {
      rows.push(p, at + next, seg.id, next, null, null);
      next++;
      computed++;
    }
  }
  seg.rows = next;
  if (d.action === 'build') seg.last = lastOf(d, posts) ?? served.last;
  return computed;
}

/**
 * A segment built from scratch: its posts in order, each row's data copied from where the served
 * generation held it (an incremental run's rebuilt segment) or computed. Returns how many rows this run computes.
 */
function placeAnew(d: Draft, seg: PlannedSegment, prev: Previous | null, posts: Posts, rows: PlanRows): number {
  const at = seg.firstRow;
  let computed = 0;
  for (let p = d.first; p < d.end; p++) {
    const held = prev && posts.heldSegment[p]! >= 0 ? prev.segments[posts.heldSegment[p]!]! : null;
    rows.push(p, at + p - d.first, seg.id, p - d.first, held?.id ?? null, held ? posts.heldRow[p]! : null);
    if (!held) computed++;
  }
  seg.rows = d.end - d.first;
  seg.last = lastOf(d, posts);
  return computed;
}

/** plan_rows (see the header), with `ci`: the row's place among the computed rows (their order: global row). */
async function writePlanRows(db: DuckDB, rows: PlanRows): Promise<void> {
  const n = rows.length;
  // ci: computed rows numbered in global row order.
  let end = 0;
  for (let k = 0; k < n; k++) end = Math.max(end, rows.row[k]! + 1);
  const at = new Int32Array(end).fill(-1);
  for (let k = 0; k < n; k++) at[rows.row[k]!] = k;
  const ci = new Int32Array(n).fill(-1);
  let next = 0;
  for (let r = 0; r < end; r++) if (at[r]! >= 0 && rows.srcSegment[at[r]!]! < 0) ci[at[r]!] = next++;
  await db.run(`CREATE OR REPLACE TEMP TABLE plan_rows_in (post INTEGER, row_id INTEGER, segment INTEGER, local_row INTEGER,
    src_segment INTEGER, src_row INTEGER, ci INTEGER)`);
  await db.appendNumbers(
    'plan_rows_in',
    [rows.post, rows.row, rows.segment, rows.local, rows.srcSegment, rows.srcRow, ci].map((c) => c.subarray(0, n)),
  );
  // A segment's name from its index (1-based lists).
  const names = `([${rows.segmentIds.map(sqlString).join(', ')}]::VARCHAR[])`;
  await db.run(`CREATE OR REPLACE TABLE plan_rows AS
    SELECT p.uuid, r.row_id::BIGINT AS row_id, ${names}[r.segment + 1] AS segment, r.local_row::BIGINT AS local_row,
      CASE WHEN r.src_segment >= 0 THEN ${names}[r.src_segment + 1] END AS src_segment,
      CASE WHEN r.src_segment >= 0 THEN r.src_row::BIGINT END AS src_row,
      r.src_segment < 0 AS compute, CASE WHEN r.src_segment < 0 THEN r.ci::BIGINT END AS ci
    FROM plan_rows_in r JOIN plan_posts p ON p.i = r.post ORDER BY r.row_id`);
  await db.run(`DROP TABLE plan_rows_in`);
}

/** Where a planned segment's files are: this run's artifacts for a built one, the served generation for a reused one. */
export function plannedSegmentDir(ctx: StageContext, plan: SegmentPlan, s: PlannedSegment): string {
  return s.action === 'build' ? segmentDir(ctx.layout.artifacts, s.id) : segmentDir(plan.previous!.dir, s.id);
}

/** The served generation's folder of a segment it holds (a base, or a source of copied rows). */
export function servedSegmentDir(plan: SegmentPlan, id: string): string {
  assert(plan.previous !== null, 'a segment of the served generation needs a served generation');
  return segmentDir(plan.previous.dir, id);
}

/** Every masked global row of the plan, ascending. */
export function maskedRows(plan: SegmentPlan): Uint32Array {
  return Uint32Array.from(plan.segments.flatMap((s) => s.masked)).sort();
}
