// What the map stages (narratives, patterns) read about every snapshot row, in row order, as
// compact columns: identity, time, author, platform, engagement and tags from the work store's
// posts. The stage's own inputs (text or visual vectors) are loaded beside these.
import { fillMaskedTimes } from '../core/segments.ts';
import type { StageContext } from './stage-context.ts';
import type { SegmentPlan } from './segment-plan.ts';
import { materialiseSnapshotRows, snapshotChunks } from './snapshot-rows.ts';

export interface PostColumns {
  rows: number;
  uuid: string[];
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
  /** 1 for a live row, 0 for a masked one (a post deleted after its segment was built: no post, never a member). */
  live: Uint8Array;
  /** 1 for a row this run computed (a post new since the served generation; every row on a full run). */
  computed: Uint8Array;
}

interface PostRow {
  row_id: number;
  uuid: string;
  t: number;
  creator_id: number | null;
  platform: string;
  e: number;
  tags: string[] | null;
  ci: number | null;
  [k: string]: unknown;
}

/**
 * The planned generation's post columns (every row; a masked row has an empty uuid, no tags, and the
 * published_at of the live row before it, so the rows stay in time order); fails when the snapshot
 * no longer has the posts the plan placed.
 */
export async function loadPostColumns(ctx: StageContext, plan: SegmentPlan): Promise<PostColumns> {
  const db = await ctx.db();
  const live = await materialiseSnapshotRows(db, 'published_at, creator_id, platform, like_count, comment_count, share_count, tags');
  if (live !== plan.liveRows)
    throw new Error(`the snapshot has ${live} of the ${plan.liveRows} posts the features stage planned; run features and index first`);
  const rows = plan.rows;
  const uuid: string[] = new Array(rows).fill('');
  const publishedAt = new Float64Array(rows).fill(NaN);
  const creator = new Float64Array(rows).fill(NaN);
  const platform = new Uint8Array(rows);
  const platforms: string[] = [];
  const interactions = new Float64Array(rows);
  const tags: string[][] = Array.from({ length: rows }, () => []);
  const isLive = new Uint8Array(rows);
  const computed = new Uint8Array(rows);
  const select = `row_id, uuid, epoch_ms(published_at)::DOUBLE AS t, creator_id::DOUBLE AS creator_id, platform,
    (coalesce(like_count, 0) + coalesce(comment_count, 0) + coalesce(share_count, 0))::DOUBLE AS e, tags, ci`;
  for await (const chunk of snapshotChunks<PostRow>(db, select, rows)) {
    for (const r of chunk) {
      const i = Number(r.row_id);
      isLive[i] = 1;
      if (r.ci !== null) computed[i] = 1;
      uuid[i] = r.uuid;
      publishedAt[i] = Number(r.t);
      creator[i] = r.creator_id === null ? NaN : Number(r.creator_id);
      let p = platforms.indexOf(r.platform);
      if (p < 0) p = platforms.push(r.platform) - 1;
      platform[i] = p;
      interactions[i] = Number(r.e);
      tags[i] = (r.tags ?? []).map((t) => t.toLowerCase());
    }
  }
  fillMaskedTimes(publishedAt);
  return { rows, uuid, publishedAt, creator, platform, platforms, interactions, tags, live: isLive, computed };
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
