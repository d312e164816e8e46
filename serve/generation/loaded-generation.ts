// One generation as the server holds it: the ranking core's index (core/ranking), the content
// columns of docs/api.md "Content item", and the narrative and pattern maps. Immutable once loaded; requests lease
// it from the snapshot store (snapshot-store.ts) so a swap never pulls it from under them.
import fs from 'node:fs/promises';
import path from 'node:path';
import { assert, AssertionFailed, assertInt } from '../../core/assert.ts';
import type { Manifest } from '../../core/generations.ts';
import { DAY_MS, WINDOW_DAYS, type WindowKey } from '../../core/windows.ts';
import { loadSearchIndex, type SearchIndex } from '../../core/ranking/search-index.ts';
import type { SearchParams } from '../../core/ranking/search.ts';
import { searchWithClusters, type SearchOutcome } from '../search/answer-clusters.ts';
import type { MemberColumns } from '../../core/maps/members.ts';
import { loadContentColumns, type ContentColumns } from './content-columns.ts';
import { loadMaps, type Maps } from '../maps/load-maps.ts';
import type { SearchPool } from '../search/search-pool.ts';

/** A window's length in days (all: from its start to the as-of instant, at least 1): the span of its daily series. */
export function windowDaysOf(gen: Pick<LoadedGeneration, 'index' | 'manifest'>, window: WindowKey): number {
  return window === 'all' ? Math.max(1, (gen.index.asOf - Date.parse(gen.manifest.windows.all.start)) / DAY_MS) : WINDOW_DAYS[window];
}

export interface LoadedGeneration {
  id: string;
  dir: string;
  manifest: Manifest;
  index: SearchIndex;
  /** Posts served: the rows minus the masked ones (deleted posts). */
  posts: number;
  content: ContentColumns;
  maps: Maps;
  loadedAt: string;
  loadMs: number;
  /** How many rows from `start` on have a text vector. */
  vectorRowsFrom(start: number): number;
  /** Creator, platform and interactions (likes + comments + shares) per row, for cluster figures. */
  members: MemberColumns;
  /** The ranking core on this generation: in the search workers when there are any, else here. */
  search(p: SearchParams): Promise<SearchOutcome>;
  /** Let the search workers drop it (once no request holds it). */
  dispose(): Promise<void>;
}

/**
 * Load a generation; with a pool, the graphs go to its workers and this thread keeps none. The
 * segments `previous` (the generation being served) holds are taken from it, not read again.
 */
export async function loadGeneration(
  dir: string,
  pool: SearchPool | null = null,
  previous: LoadedGeneration | null = null,
): Promise<LoadedGeneration> {
  const t0 = performance.now();
  const manifest = JSON.parse(await fs.readFile(path.join(dir, 'manifest.json'), 'utf8')) as Manifest;
  const held = previous ? [previous.index] : [];
  const index = await loadSearchIndex(dir, pool ? { graphs: false, share: true, held } : { held });
  // The content columns before the workers' graphs: reading them through DuckDB leaves a transient
  // of several hundred MB, which on top of the graphs made the server's peak (at 1M posts 3,137
  // against 2,606 MiB this way round, for the same memory once loaded).
  const [content, maps] = await Promise.all([loadContentColumns(dir, index.rows), loadMaps(dir, manifest.generation)]);
  // Every member list names rows of this generation (a map from another generation would not).
  for (const m of [...maps.narratives, ...maps.patterns]) {
    for (const r of m.members)
      if (!(r >= 0 && r < index.rows)) throw new AssertionFailed(`${dir}: a map member names row ${r} of ${index.rows}`);
  }
  try {
    if (pool) {
      assert(index.shared, 'an index loaded for the search workers shares its parts');
      await pool.load(manifest.generation, dir, index.shared);
    }
  } catch (err) {
    await pool?.drop(manifest.generation);
    throw err;
  }
  const after = new Uint32Array(index.rows + 1);
  // A masked row has no vector (its scale is cleared at load).
  for (let r = index.rows - 1; r >= 0; r--) after[r] = after[r + 1]! + (index.vectors.hasVector(r) ? 1 : 0);
  return {
    id: manifest.generation,
    dir,
    manifest,
    index,
    posts: index.rows - index.deleted.reduce((a, d) => a + d, 0),
    content,
    maps,
    loadedAt: new Date().toISOString(),
    loadMs: Math.round(performance.now() - t0),
    vectorRowsFrom: (start) => {
      assertInt(start, 0, index.rows, 'first row');
      return after[start]!;
    },
    members: {
      creator: content.creatorId,
      platform: content.platform,
      interactions: Float64Array.from({ length: index.rows }, (_, r) => index.likes[r]! + index.comments[r]! + index.shares[r]!),
    },
    search: pool ? (p) => pool.search(manifest.generation, p) : async (p) => searchWithClusters(index, p),
    dispose: pool ? () => pool.drop(manifest.generation) : async () => undefined,
  };
}
