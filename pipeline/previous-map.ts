// The served generation's map (narratives or patterns) as the next run needs it to carry keys
// over: per group (window or scope), each entry's id, key, member uuids and centre (in this run's
// space), and the map's trajectory history.
import fs from 'node:fs/promises';
import path from 'node:path';
import { openDuckDB, sqlString } from '../core/duckdb.ts';
import { generationDir, readCurrent } from '../core/generations.ts';
import { previousCentroid } from '../core/clustering/kmeans-by-silhouette.ts';
import { mergeIntoPrevious, type MergedRange } from '../core/clustering/merge-models.ts';
import type { ClusterOptions } from '../core/clustering/kmeans-by-silhouette.ts';
import { overlapCoefficient, type Match, type PreviousNarrative, type TrackedSide } from '../core/clustering/tracking.ts';
import { dot } from '../core/dot.ts';
import { writeRowTable } from './row-table.ts';
import type { StageContext } from './stage-context.ts';

export interface PreviousEntry extends PreviousNarrative {
  id: string;
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

/** This run's vectors, and the row of each uuid. */
export interface CurrentSpace {
  vectors: Float32Array;
  dim: number;
  hasVector: Uint8Array;
  rowOf: Map<string, number>;
}

export function currentSpace(c: { vectors: Float32Array; dim: number; hasVector: Uint8Array; uuid: string[] }): CurrentSpace {
  return { vectors: c.vectors, dim: c.dim, hasVector: c.hasVector, rowOf: new Map(c.uuid.map((u, r) => [u, r])) };
}

/**
 * The served generation's map, each entry's centre recomputed in this run's space from its
 * members (entries none of whose members are left are dropped); null without a served map.
 */
export async function loadPreviousMap(ctx: StageContext, space: CurrentSpace, f: MapFiles): Promise<PreviousMap | null> {
  const gen = await readCurrent(ctx.layout);
  if (!gen) return null;
  const dir = generationDir(ctx.layout, gen);
  const file = (n: string) => sqlString(path.join(dir, n));
  try {
    await fs.access(path.join(dir, f.table));
  } catch {
    return null;
  }
  const db = await openDuckDB();
  try {
    const entries = await db.all<{ id: string; key: string; grp: string }>(
      `SELECT ${f.id} AS id, ${f.key} AS key, ${f.group} AS grp FROM read_parquet(${file(f.table)}) ORDER BY centroid_index`,
    );
    const members = await db.columns(`SELECT ${f.memberOf} AS owner, uuid FROM read_parquet(${file(f.members)})`);
    const byId = new Map<string, Set<string>>();
    const owners = members.owner as string[];
    const uuids = members.uuid as string[];
    for (let i = 0; i < owners.length; i++) {
      let s = byId.get(owners[i]!);
      if (!s) byId.set(owners[i]!, (s = new Set<string>()));
      s.add(uuids[i]!);
    }
    const byGroup = new Map<string, PreviousEntry[]>();
    for (const e of entries) {
      const list = byGroup.get(e.grp) ?? [];
      const own = byId.get(e.id) ?? new Set<string>();
      // Compared in this run's space: the stored centroid lives in the space its run fitted.
      const centroid = previousCentroid(own, space.rowOf, space.vectors, space.dim, space.hasVector);
      if (centroid) list.push({ id: e.id, key: e.key, centroid, members: own });
      byGroup.set(e.grp, list);
    }
    const trajectory = (await db.all(`SELECT * FROM read_parquet(${file(f.trajectory)})`)).map((r) => ({
      ...r,
      generation: r.generation ?? gen,
      content_count: Number(r.content_count),
      creator_count: Number(r.creator_count),
    }));
    return { generation: gen, byGroup, trajectory };
  } finally {
    db.close();
  }
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
 * An incremental run's clusters of a window (or scope) from `firstRow` on: the served entries'
 * members in this run's rows, the new posts merged in (core/clustering/merge-models.ts).
 */
export function mergeWindow(
  corpus: { vectors: Float32Array; dim: number; hasVector: Uint8Array; computed: Uint8Array },
  space: CurrentSpace,
  firstRow: number,
  previous: readonly PreviousEntry[],
  opts: ClusterOptions,
): MergedRange {
  const rowsOf = (e: PreviousEntry) => [...e.members].map((u) => space.rowOf.get(u)).filter((r): r is number => r !== undefined);
  return mergeIntoPrevious(corpus.vectors, corpus.dim, corpus.hasVector, firstRow, corpus.computed, previous.map(rowsOf), opts);
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
