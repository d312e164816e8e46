// The served generation's map (narratives or patterns) as the next run needs it to carry keys
// over: per group (window or scope), each entry's id, key, centroid and member uuids, and the
// map's trajectory history.
import fs from 'node:fs/promises';
import path from 'node:path';
import { openDuckDB, sqlString } from '../core/duckdb.ts';
import { generationDir, readCurrent } from '../core/generations.ts';
import type { PreviousNarrative } from './narratives/tracking.ts';
import type { StageContext } from './stage.ts';

export interface PreviousEntry extends PreviousNarrative { id: string }
export interface PreviousMap { generation: string; byGroup: Map<string, PreviousEntry[]>; trajectory: Array<Record<string, unknown>> }

/** Files and columns of one map in a generation. */
export interface MapFiles {
  table: string;
  centroids: string;
  members: string;
  trajectory: string;
  /** Columns of `table`. */
  id: string;
  key: string;
  group: string;
  /** Column of `members` naming the entry's id. */
  memberOf: string;
}

export async function loadPreviousMap(ctx: StageContext, dim: number, f: MapFiles): Promise<PreviousMap | null> {
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
    const entries = await db.all<{ id: string; key: string; grp: string; centroid_index: number }>(
      `SELECT ${f.id} AS id, ${f.key} AS key, ${f.group} AS grp, centroid_index FROM read_parquet(${file(f.table)}) ORDER BY centroid_index`);
    const raw = await fs.readFile(path.join(dir, f.centroids));
    const centroids = new Float32Array(raw.buffer.slice(raw.byteOffset, raw.byteOffset + raw.byteLength));
    // Centroids of another dimension (a different vector space) cannot be compared: matching then
    // rests on the members alone.
    const prevDim = entries.length ? centroids.length / entries.length : dim;
    const members = await db.all<{ owner: string; uuid: string }>(`SELECT ${f.memberOf} AS owner, uuid FROM read_parquet(${file(f.members)})`);
    const byId = new Map<string, Set<string>>();
    for (const m of members) {
      const s = byId.get(m.owner) ?? new Set<string>();
      s.add(m.uuid);
      byId.set(m.owner, s);
    }
    const byGroup = new Map<string, PreviousEntry[]>();
    for (const e of entries) {
      const list = byGroup.get(e.grp) ?? [];
      const ci = Number(e.centroid_index);
      list.push({ id: e.id, key: e.key, centroid: prevDim === dim ? centroids.slice(ci * dim, (ci + 1) * dim) : new Float32Array(0), members: byId.get(e.id) ?? new Set() });
      byGroup.set(e.grp, list);
    }
    const trajectory = (await db.all(`SELECT * FROM read_parquet(${file(f.trajectory)})`))
      .map((r) => ({ ...r, generation: r.generation ?? gen, content_count: Number(r.content_count), creator_count: Number(r.creator_count) }));
    return { generation: gen, byGroup, trajectory };
  } finally {
    db.close();
  }
}
