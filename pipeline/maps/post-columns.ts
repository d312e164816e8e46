// What the map stages (narratives, patterns) read about every snapshot row, in row order, as
// compact columns: identity, time, author, platform, engagement and tags from the work store's
// posts. The stage's own inputs (text or visual vectors) are loaded beside these.
import { createHash } from 'node:crypto';
import { sqlString } from '../../core/infra/duckdb.ts';
import type { RowKeyLists } from '../../core/maps/label-counts.ts';
import { fillMaskedTimes } from '../../core/snapshots/segments.ts';
import type { StageContext } from '../context/stage-context.ts';
import type { SegmentPlan } from '../segments/segment-plan.ts';
import { materialiseSnapshotRows } from '../segments/snapshot-rows.ts';

const CHUNK = 100_000;
/** Shared by every row without tags (never written to). */
const NO_TAGS: string[] = [];

export interface PostColumns {
  rows: number;
  publishedAt: Float64Array;
  /** NaN when unknown. */
  creator: Float64Array;
  /** Index into `platforms`. */
  platform: Uint8Array;
  platforms: string[];
  /** likes + comments + shares (core/maps/members.ts). */
  interactions: Float64Array;
  /** Lower-cased. */
  tags: string[][];
  /** The same tags as ids into tagNames (rows' lists in order, duplicates kept): what the maps count. */
  tagKeys: RowKeyLists;
  /** Distinct lower-cased tags. */
  tagNames: string[];
  /** 1 for a live row, 0 for a masked one (a post deleted after its segment was built: no post, never a member). */
  live: Uint8Array;
  /** 1 for a row this run computed (a post new since the served generation; every row on a full run). */
  computed: Uint8Array;
}

/**
 * The uuids of some rows of the plan (the few a map names: representatives, medoids, first members),
 * read when needed: the columns below carry no uuid (a million strings the maps never read).
 */
export async function uuidsOf(ctx: StageContext, rows: Iterable<number>): Promise<Map<number, string>> {
  const wanted = [...new Set(rows)];
  const out = new Map<number, string>();
  const db = await ctx.db();
  for (let at = 0; at < wanted.length; at += CHUNK) {
    const res = await db.all<{ row_id: number; uuid: string }>(
      `SELECT row_id::DOUBLE AS row_id, uuid FROM plan_rows WHERE row_id IN (${wanted.slice(at, at + CHUNK).join(',')})`,
    );
    for (const r of res) out.set(Number(r.row_id), r.uuid);
  }
  return out;
}

/**
 * The planned generation's post columns (every row; a masked row has no tags, and the
 * published_at of the live row before it, so the rows stay in time order); fails when the snapshot
 * no longer has the posts the plan placed.
 */
export function loadPostColumns(ctx: StageContext, plan: SegmentPlan): Promise<PostColumns> {
  // The narratives and patterns stages of one run read the same columns of the same plan: loaded once.
  const key = `post-columns:${createHash('sha256').update(JSON.stringify(plan)).digest('hex')}`;
  return ctx.reuse(key, () => readPostColumns(ctx, plan));
}

async function readPostColumns(ctx: StageContext, plan: SegmentPlan): Promise<PostColumns> {
  const db = await ctx.db();
  const live = await materialiseSnapshotRows(db, 'published_at, creator_id, platform, like_count, comment_count, share_count, tags');
  if (live !== plan.liveRows)
    throw new Error(`the snapshot has ${live} of the ${plan.liveRows} posts the features stage planned; run features and index first`);
  const rows = plan.rows;
  const publishedAt = new Float64Array(rows).fill(NaN);
  const creator = new Float64Array(rows).fill(NaN);
  const platform = new Uint8Array(rows);
  const interactions = new Float64Array(rows);
  const tags: string[][] = new Array<string[]>(rows).fill(NO_TAGS);
  const isLive = new Uint8Array(rows);
  const computed = new Uint8Array(rows);
  // Platforms in order of first appearance; each row's as an index into them.
  const platforms = ((await db.columns(`SELECT platform FROM snap GROUP BY platform ORDER BY min(row_id)`)).platform ?? []) as string[];
  if (platforms.length > 255) throw new Error(`${platforms.length} platforms: at most 255 are supported`);
  const platformIndex = platforms.length
    ? `(CASE platform ${platforms.map((p, i) => `WHEN ${sqlString(p)} THEN ${i}`).join(' ')} END)::UTINYINT`
    : '0::UTINYINT';
  // The numbers as typed columns (no JS value per cell); the tags of the rows that have some.
  const c = await db.numbers(`SELECT row_id::INTEGER AS row_id, epoch_ms(published_at)::DOUBLE AS t, creator_id::DOUBLE AS creator_id,
      ${platformIndex} AS platform, (coalesce(like_count, 0) + coalesce(comment_count, 0) + coalesce(share_count, 0))::DOUBLE AS e,
      (ci IS NOT NULL)::UTINYINT AS computed
    FROM snap`);
  const ids = c.row_id!;
  for (let k = 0; k < ids.length; k++) {
    const i = ids[k]!;
    isLive[i] = 1;
    computed[i] = c.computed![k]!;
    publishedAt[i] = c.t![k]!;
    creator[i] = c.creator_id![k]!;
    platform[i] = c.platform![k]!;
    interactions[i] = c.e![k]!;
  }
  // Tags interned in DuckDB: each distinct tag becomes a JS string once (lower-cased here, as
  // ever), each row's list a run of ids (a list column per row cost two seconds at 1M rows).
  await db.run(`CREATE OR REPLACE TEMP TABLE snap_tags AS
    SELECT row_id::INTEGER AS row_id, unnest(tags) AS tag, generate_subscripts(tags, 1) AS pos FROM snap WHERE len(tags) > 0`);
  await db.run(`CREATE OR REPLACE TEMP TABLE tag_vocab AS
    SELECT tag, (row_number() OVER (ORDER BY tag) - 1)::INTEGER AS id FROM (SELECT DISTINCT tag FROM snap_tags)`);
  const vocab = ((await db.columns(`SELECT tag FROM tag_vocab ORDER BY id`)).tag ?? []) as string[];
  const lower = vocab.map((t) => t.toLowerCase());
  // Tags that differ only in case are one key.
  const tagNames: string[] = [];
  const nameIds = new Map<string, number>();
  const keyOf = Int32Array.from(lower, (t) => {
    let id = nameIds.get(t);
    if (id === undefined) nameIds.set(t, (id = tagNames.push(t) - 1));
    return id;
  });
  const t = await db.numbers(`SELECT s.row_id, v.id FROM snap_tags s JOIN tag_vocab v USING (tag) ORDER BY s.row_id, s.pos`);
  await db.run(`DROP TABLE snap_tags; DROP TABLE tag_vocab`);
  const tagRows = t.row_id!;
  const tagIds = t.id!;
  const tagKeys = { offsets: new Int32Array(rows + 1), ids: new Int32Array(tagIds.length) };
  for (let k = 0; k < tagRows.length;) {
    const r = tagRows[k]!;
    const list: string[] = [];
    for (; k < tagRows.length && tagRows[k] === r; k++) {
      list.push(lower[tagIds[k]!]!);
      tagKeys.ids[k] = keyOf[tagIds[k]!]!;
      tagKeys.offsets[r + 1]!++;
    }
    tags[r] = list;
  }
  for (let r = 0; r < rows; r++) tagKeys.offsets[r + 1]! += tagKeys.offsets[r]!;
  fillMaskedTimes(publishedAt);
  return { rows, publishedAt, creator, platform, platforms, interactions, tags, tagKeys, tagNames, live: isLive, computed };
}

/** A window (or scope) of the snapshot: its bounds and its first row (rows are in published_at order). */
export interface RowWindow {
  key: string;
  start: string;
  end: string;
  firstRow: number;
}

/** Each window's first row, from the window bounds of this snapshot. */
export function rowWindows(p: PostColumns, bounds: Record<string, { start: string; end: string }>, keys: readonly string[]): RowWindow[] {
  return keys.map((key) => {
    const startMs = Date.parse(bounds[key]!.start);
    let firstRow = 0;
    while (firstRow < p.rows && p.publishedAt[firstRow]! < startMs) firstRow++;
    return { key, start: bounds[key]!.start, end: bounds[key]!.end, firstRow };
  });
}
