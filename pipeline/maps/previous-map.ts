// The served generation's map (narratives or patterns) as the next run needs it to carry keys
// over: per group (window or scope), each entry's id, key, members (as this run's rows), the sum
// of their vectors and centre (in this run's space), and the map's trajectory history.
import fs from 'node:fs/promises';
import path from 'node:path';
import { sqlString } from '../../core/infra/duckdb.ts';
import { generationDir, readCurrent, readManifest } from '../../core/snapshots/generations.ts';
import { withFirstRows } from '../../core/snapshots/segments.ts';
import type { SegmentPlan } from '../segments/segment-plan.ts';
import { mergeWindowsIntoPrevious, partitionSums, unitOf, type MergedRange, type StoryMode } from '../../core/clustering/merge-models.ts';
import type { ClusterOptions } from '../../core/clustering/kmeans-by-silhouette.ts';
import { overlapCoefficient, type Match, type PreviousNarrative, type TrackedSide } from '../../core/clustering/tracking.ts';
import { dot } from '../../core/vectors/dot.ts';
import { writeRowTable } from '../store/row-table.ts';
import type { StageContext } from '../context/stage-context.ts';

export interface PreviousEntry extends PreviousNarrative {
  id: string;
  /** Member rows in this run, ascending (posts deleted since are gone). */
  members: Int32Array;
  /** Sum of the members' vectors (those with one) in this run's space. */
  sum: Float64Array;
}
export interface PreviousMap {
  generation: string;
  byGroup: Map<string, PreviousEntry[]>;
  trajectory: Array<Record<string, unknown>>;
}

/** Files and columns of one map in a generation. */
export interface MapFiles {
  table: string;
  members: string;
  trajectory: string;
  /** Columns of `table`. */
  id: string;
  key: string;
  group: string;
  /** Column of `members` naming the entry's id. */
  memberOf: string;
}

/** This run's vectors. */
interface CurrentSpace {
  vectors: Float32Array;
  dim: number;
  hasVector: Uint8Array;
}

export function currentSpace(c: { vectors: Float32Array; dim: number; hasVector: Uint8Array }): CurrentSpace {
  return { vectors: c.vectors, dim: c.dim, hasVector: c.hasVector };
}

/**
 * The served generation's map, each entry's members mapped to this run's rows (joined on uuid with
 * the work store's plan_rows inside DuckDB: a million member uuids never become JS strings) and its
 * centre recomputed in this run's space from them (entries none of whose members are left are
 * dropped); null without a served map.
 */
export async function loadPreviousMap(ctx: StageContext, plan: SegmentPlan, space: CurrentSpace, f: MapFiles): Promise<PreviousMap | null> {
  const gen = await readCurrent(ctx.layout);
  if (!gen) return null;
  const dir = generationDir(ctx.layout, gen);
  const file = (n: string) => sqlString(path.join(dir, n));
  try {
    await fs.access(path.join(dir, f.table));
  } catch {
    return null;
  }
  const db = await ctx.db();
  const entries = (
    await db.all<{ id: string; key: string; grp: string }>(
      `SELECT ${f.id} AS id, ${f.key} AS key, ${f.group} AS grp FROM read_parquet(${file(f.table)}) ORDER BY centroid_index`,
    )
  ).map((e, i) => ({ ...e, i }));
  // Every member as (entry, row), entry by entry, rows ascending: numbers out of DuckDB, no string per member.
  // A member's row in this run: on an incremental run planned from this generation, through where
  // plan_rows says each row's data comes from (the served segment and row: integers, joined on the
  // member's post_row); otherwise (a full run) through its uuid.
  const byRow = plan.mode === 'incremental' && plan.previous?.generation === gen;
  const firsts = byRow ? withFirstRows((await readManifest(ctx.layout, gen)).segments ?? []) : [];
  const here = byRow
    ? `(SELECT f.first + r.src_row AS prev_row, r.row_id FROM plan_rows r
        JOIN (VALUES ${firsts.map((s) => `(${sqlString(s.id)}, ${s.firstRow})`).join(', ') || `('', 0)`}) AS f(seg, first) ON f.seg = r.src_segment) r
        ON r.prev_row = m.post_row`
    : `plan_rows r ON r.uuid = m.uuid`;
  const m = await db.numbers(`WITH e AS (SELECT ${f.id} AS id, (row_number() OVER (ORDER BY centroid_index) - 1)::INTEGER AS i
      FROM read_parquet(${file(f.table)}))
    SELECT e.i AS owner, r.row_id::INTEGER AS row FROM read_parquet(${file(f.members)}) m JOIN e ON m.${f.memberOf} = e.id
      JOIN ${here} ORDER BY e.i, r.row_id`);
  const owner = m.owner as Int32Array;
  const all = m.row as Int32Array;
  const membersOf = new Map<number, Int32Array>();
  for (let at = 0; at < owner.length;) {
    const o = owner[at]!;
    let end = at;
    while (end < owner.length && owner[end] === o) end++;
    membersOf.set(o, all.subarray(at, end));
    at = end;
  }
  const byGroup = new Map<string, PreviousEntry[]>();
  const groups = new Map<string, typeof entries>();
  for (const e of entries) {
    const list = groups.get(e.grp);
    if (list) list.push(e);
    else groups.set(e.grp, [e]);
  }
  const lists = [...groups.values()];
  const members = lists.map((list) => list.map((e) => membersOf.get(e.i) ?? new Int32Array(0)));
  // Compared in this run's space: the stored centroid lives in the space its run fitted.
  const sums = partitionSums(space.vectors, space.dim, space.hasVector, members);
  [...groups.keys()].forEach((grp, g) => {
    const kept: PreviousEntry[] = [];
    lists[g]!.forEach((e, k) => {
      const m = members[g]![k]!;
      if (m.some((r) => space.hasVector[r] === 1))
        kept.push({ id: e.id, key: e.key, centroid: unitOf(sums[g]![k]!), members: m, sum: sums[g]![k]! });
    });
    byGroup.set(grp, kept);
  });
  const trajectory = (await db.all(`SELECT * FROM read_parquet(${file(f.trajectory)})`)).map((r) => ({
    ...r,
    generation: r.generation ?? gen,
    content_count: Number(r.content_count),
    creator_count: Number(r.creator_count),
  }));
  return { generation: gen, byGroup, trajectory };
}

/**
 * A map's trajectory table: the served generation's rows (they name their generation), then this
 * run's, whose generation is null until publish names it (readers take it from the manifest).
 */
export async function writeTrajectory(
  ctx: StageContext,
  table: string,
  columns: Record<string, string>,
  previous: PreviousMap | null,
  thisRun: Array<Record<string, unknown>>,
): Promise<void> {
  const rows = [...(previous?.trajectory ?? []), ...thisRun.map((r) => ({ ...r, generation: null }))].map((r, i) => ({ ...r, row_id: i }));
  await writeRowTable(ctx, table, columns, rows);
}

/**
 * An incremental run's clusters of some windows (or scopes), each from its `firstRow` on: the served
 * entries' members in this run's rows, the new posts merged in (core/clustering/merge-models.ts).
 */
export function mergeWindows(
  corpus: { vectors: Float32Array; dim: number; hasVector: Uint8Array; computed: Uint8Array },
  windows: ReadonlyArray<{ firstRow: number; previous: readonly PreviousEntry[] }>,
  opts: ClusterOptions,
  story?: StoryMode,
): MergedRange[] {
  return mergeWindowsIntoPrevious(corpus.vectors, corpus.dim, corpus.hasVector, corpus.computed, windows, opts, story);
}

/** The matches of merged clusters: each continues the entry it came from (its centres' cosine, their members' overlap). */
export function continued(
  built: readonly TrackedSide[],
  origin: ReadonlyArray<number | null>,
  previous: readonly PreviousEntry[],
): Array<Match | null> {
  return built.map((b, i) => {
    const p = origin[i];
    if (p === null || p === undefined) return null;
    const e = previous[p]!;
    return { previous: p, cosine: dot(b.centroid, 0, e.centroid, 0, b.centroid.length), overlap: overlapCoefficient(b.members, e.members) };
  });
}
