// The snapshot's row order, shared by every stage that writes per-row artifacts and by publish:
// row i of text-vectors.f32, of the HNSW labels and of BM25 postings is row i of posts.parquet.
import { sqlString, type DuckDB } from '../core/duckdb.ts';

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
export async function* snapshotChunks<T extends Record<string, unknown>>(db: DuckDB, select: string, total: number, chunk = 50_000): AsyncGenerator<T[]> {
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
