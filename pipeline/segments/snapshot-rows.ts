// The snapshot's rows, shared by every stage that writes per-row artifacts and by publish. The
// generation's rows are its time segments' rows laid end to end (pipeline/segments/segment-plan.ts): the
// features stage plans them and leaves each live post's global row in the work store's plan_rows;
// row i of the concatenated segment files (vectors, terms, tables) is row i of posts.parquet's
// row_id. Rows of posts deleted after their segment was built are masked: no post, no vector.
import fs from 'node:fs/promises';
import { sqlString, type DuckDB } from '../../core/infra/duckdb.ts';
import type { StageContext } from '../context/stage-context.ts';

export const snapshotWhere = (asOfIso: string) => `published_at <= ${sqlString(asOfIso)}::TIMESTAMPTZ`;

/**
 * Materialise temp table `snap(row_id, ci, uuid, ...columns)` from plan_rows: every live post with
 * its global row, or with `computeOnly` only the rows this run computes (ci: their order). Returns
 * the count.
 */
export async function materialiseSnapshotRows(db: DuckDB, columns: string, opts: { computeOnly?: boolean } = {}): Promise<number> {
  await db.run(`CREATE OR REPLACE TEMP TABLE snap AS
    SELECT r.row_id, r.ci, p.uuid, ${columns
      .split(',')
      .map((c) => `p.${c.trim()}`)
      .join(', ')}
    FROM plan_rows r JOIN posts p USING (uuid) ${opts.computeOnly ? 'WHERE r.compute' : ''} ORDER BY r.row_id`);
  const [r] = await db.all<{ n: number }>(`SELECT count(*)::BIGINT AS n FROM snap`);
  return Number(r?.n ?? 0);
}

/** Visit `snap` in order of `key` (row_id, or ci for the computed rows), keys [0, end) `chunk` at a time (bounded memory at 1M rows). */
export async function* snapshotChunks<T extends Record<string, unknown>>(
  db: DuckDB,
  select: string,
  end: number,
  chunk = 50_000,
  key: 'row_id' | 'ci' = 'row_id',
): AsyncGenerator<T[]> {
  for (let start = 0; start < end; start += chunk) {
    yield await db.all<T>(`SELECT ${select} FROM snap WHERE ${key} >= ${start} AND ${key} < ${start + chunk} ORDER BY ${key}`);
  }
}

/** What per-row artifacts were built from; publish refuses artifacts built for other rows. */
export interface ArtifactSource {
  /** ISO text (the files' name). */
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
  stale: (s: ArtifactSource, asOfIso: string) => string,
): Promise<ArtifactSource> {
  let source: ArtifactSource;
  try {
    source = JSON.parse(await fs.readFile(file, 'utf8')) as ArtifactSource;
  } catch {
    throw new Error(missing);
  }
  const asOfIso = ctx.asOf.toISOString();
  if (source.asOf !== asOfIso || source.ingestVersion !== (await ingestVersion(ctx))) throw new Error(stale(source, asOfIso));
  return source;
}
