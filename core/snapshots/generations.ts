// Snapshot generations (docs/operations.md, "Data directory"): DATA_DIR/snapshots/<G>/ holds one immutable generation
// and DATA_DIR/snapshots/CURRENT names the one served. Readers (the server, benchmarks, tests)
// use only this module, never the pipeline's work store.
import fs from 'node:fs/promises';
import path from 'node:path';
import type { DataDirLayout } from '../infra/data-dir.ts';
import type { SegmentInfo } from './segments.ts';
import type { WindowBounds, WindowKey } from './windows.ts';

// 2: the rows live in time segments (core/snapshots/segments.ts), posts.parquet carries row_id.
export const SNAPSHOT_SCHEMA_VERSION = 2;
const GEN_RE = /^g(\d{6,})$/;

export interface ManifestFile {
  name: string;
  bytes: number;
  sha256: string;
  /** Row count for tables; null for index and other binary files. */
  rows: number | null;
}

/** What a generation's embedder is and was fitted on (manifest.json `embedder`). */
export interface EmbedderInfo {
  model: string;
  version: string;
  fitted_rows: number;
  fitted_as_of: string;
  /** Words folded in since the fit (core/vectors/fold-in.ts), all runs since it together; absent before they were kept. */
  folded_words?: number;
}

export interface Manifest {
  schema_version: number;
  generation: string;
  previous_generation: string | null;
  computed_at: string;
  as_of: string;
  windows: Record<WindowKey, WindowBounds>;
  /** The embedder queries use, and what it was fitted on (the refit rule reads these). */
  embedder: EmbedderInfo | null;
  files: ManifestFile[];
  counts: Record<string, number>;
  /** The generation's time segments, oldest first (absent in schema version 1). */
  segments?: SegmentInfo[];
  /** The highest segment number ever used in this data directory (ids are never reused). */
  last_segment?: number;
  /** Incremental or full, and why a run was full. */
  run?: { mode: 'full' | 'incremental'; full_because: string | null; built: string[]; reused: string[] };
}

export function generationId(n: number): string {
  return `g${String(n).padStart(6, '0')}`;
}

export function generationNumber(id: string): number | null {
  const m = GEN_RE.exec(id);
  return m ? Number(m[1]) : null;
}

/** Published generation ids, oldest first. */
export async function listGenerations(layout: DataDirLayout): Promise<string[]> {
  let names: string[] = [];
  try {
    names = await fs.readdir(layout.snapshots);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  return names.filter((n) => GEN_RE.test(n)).sort((a, b) => generationNumber(a)! - generationNumber(b)!);
}

export async function readCurrent(layout: DataDirLayout): Promise<string | null> {
  try {
    const id = (await fs.readFile(layout.current, 'utf8')).trim();
    return GEN_RE.test(id) ? id : null;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
}

export function generationDir(layout: DataDirLayout, id: string): string {
  return path.join(layout.snapshots, id);
}

export async function readManifest(layout: DataDirLayout, id: string): Promise<Manifest> {
  return JSON.parse(await fs.readFile(path.join(generationDir(layout, id), 'manifest.json'), 'utf8')) as Manifest;
}
