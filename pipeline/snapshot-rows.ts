// The snapshot's row order, shared by every stage that writes per-row artifacts and by publish:
// row i of text-vectors.f32, of the HNSW labels and of BM25 postings is row i of posts.parquet.
import fs from 'node:fs/promises';
import { sqlString, type DuckDB } from '../core/duckdb.ts';
import type { StageContext } from './stage-context.ts';

export const SNAPSHOT_ORDER = 'published_at, uuid';

export const snapshotWhere = (asOf: string) => `published_at <= ${sqlString(asOf)}::TIMESTAMPTZ`;

/** Materialise temp table `snap(row_id, ...columns)` in snapshot order; returns the row count. */
export async function materialiseSnapshotRows(db: DuckDB, asOf: string, columns: string): Promise<number> {
  await db.run(`CREATE OR REPLACE TEMP TABLE snap AS
    SELECT (row_number() OVER (ORDER BY ${SNAPSHOT_ORDER}) - 1)::BIGINT AS row_id, ${columns}
    FROM posts WHERE ${snapshotWhere(asOf)}`);
  const [r] = await db.all<{ n: number }>(`SELECT count(*)::BIGINT AS n FROM snap`);
  return Number(r?.n ?? 0);
}

/** Visit `snap` in row order, `chunk` rows at a time (bounded memory at 1M rows). */
export async function* snapshotChunks<T extends Record<string, unknown>>(
  db: DuckDB,
  select: string,
  total: number,
  chunk = 50_000,
): AsyncGenerator<T[]> {
  for (let start = 0; start < total; start += chunk) {
    yield await db.all<T>(`SELECT ${select} FROM snap WHERE row_id >= ${start} AND row_id < ${start + chunk} ORDER BY row_id`);
  }
}

/** What per-row artifacts were built from; publish refuses artifacts built for other rows. */
export interface ArtifactSource {
  asOf: string;
  rows: number;
  ingestVersion: number;
}

/** Version of the ingested data (bumped by each ingest that changed it). */
export async function ingestVersion(ctx: StageContext): Promise<number> {
  const db = await ctx.db();
  const [r] = await db.all<{ v: number }>(`SELECT coalesce(max(version), 0)::BIGINT AS v FROM stage_state WHERE stage = 'ingest'`);
  return Number(r?.v ?? 0);
}

/**
 * The ArtifactSource an earlier stage left in `file`, checked against this run: same as-of, same
 * ingested data. `missing` is the error when there is none; a stale one names `stages` to run.
 */
export async function requireArtifactSource(
  ctx: StageContext,
  file: string,
  missing: string,
  stale: (s: ArtifactSource, asOf: string) => string,
): Promise<ArtifactSource> {
  let source: ArtifactSource;
  try {
    source = JSON.parse(await fs.readFile(file, 'utf8')) as ArtifactSource;
  } catch {
    throw new Error(missing);
  }
  const asOf = ctx.asOf.toISOString();
  if (source.asOf !== asOf || source.ingestVersion !== (await ingestVersion(ctx))) throw new Error(stale(source, asOf));
  return source;
}
