// Which window tails (core/ranking/segment-graphs.ts) the next generation's text graphs need, and
// which of them exist already. A tail is the graph of a segment's rows from a window's start on;
// the windows' starts move forward run by run, so a tail built for one start serves the later ones
// until the window keeps less than TAIL_SHARE of it: then a new one is built from the new start.
// An appended segment extends its base's tail by the new rows, as its own graph is extended.
import { sqlString } from '../../core/infra/duckdb.ts';
import { TAIL_SHARE } from '../../core/ranking/segment-graphs.ts';
import { windowBounds, type WindowKey } from '../../core/snapshots/windows.ts';
import type { SegmentTail } from '../../core/snapshots/segments.ts';
import type { PlannedSegment } from '../segments/segment-plan.ts';
import type { StageContext } from '../context/stage-context.ts';

/** What a segment's tail takes: kept as the served generation has it, extended from its base's, or built anew. */
type TailWork =
  | { action: 'keep'; from: number; points: number }
  | { action: 'extend'; from: number; basePoints: number }
  | { action: 'build'; from: number };

/**
 * The tails one segment needs for the windows starting inside it (`starts`: local rows), from the
 * tails it has (`have`: a reused segment's own; an appended segment's base's, which grew by rows
 * since; none for a segment built from scratch).
 */
export function planTails(
  seg: { rows: number; action: 'reuse' | 'build'; base: string | null },
  starts: readonly number[],
  have: readonly SegmentTail[],
  minRows: number,
): TailWork[] {
  if (seg.rows < minRows) return [];
  const out: TailWork[] = [];
  // Earliest start first: a tail built for it may serve the later ones.
  for (const L of [...new Set(starts)].filter((x) => x > 0 && x < seg.rows).sort((a, b) => a - b)) {
    const keeps = (from: number) => seg.rows - L >= TAIL_SHARE * (seg.rows - from);
    if (seg.rows - L >= TAIL_SHARE * seg.rows) continue; // the segment's own graph, filtered
    const chosen = out.filter((w) => w.from <= L && keeps(w.from)).pop();
    if (chosen) continue;
    const old = have.filter((t) => t.from <= L && keeps(t.from)).pop();
    if (!old) out.push({ action: 'build', from: L });
    else if (seg.action === 'reuse') out.push({ action: 'keep', from: old.from, points: old.points });
    else if (seg.base !== null) out.push({ action: 'extend', from: old.from, basePoints: old.points });
    else out.push({ action: 'build', from: L });
  }
  return out.sort((a, b) => a.from - b.from);
}

/** The windows' first rows (global) in the planned rows: the first live row published at or after each start. */
export async function windowStartRows(ctx: StageContext, total: number): Promise<Record<Exclude<WindowKey, 'all'>, number>> {
  const db = await ctx.db();
  const bounds = windowBounds(ctx.asOf, null);
  const out = {} as Record<Exclude<WindowKey, 'all'>, number>;
  for (const w of ['7d', '30d', '90d'] as const) {
    const [r] = await db.all<{ first: number | null }>(
      `SELECT min(r.row_id)::DOUBLE AS first FROM plan_rows r JOIN posts p USING (uuid)
       WHERE p.published_at >= ${sqlString(bounds[w].start)}::TIMESTAMPTZ`,
    );
    out[w] = r?.first == null ? total : Number(r.first);
  }
  return out;
}

/** The local rows at which windows start inside a planned segment. */
export function startsIn(seg: PlannedSegment, starts: Record<string, number>): number[] {
  return Object.values(starts)
    .map((g) => g - seg.firstRow)
    .filter((l) => l > 0 && l < seg.rows);
}
