// The pipeline's working store: a DuckDB database file under DATA_DIR/work. DuckDB gives the
// stages transactions (an ingest of one file commits whole or not at all, so a kill -9 leaves
// nothing half-applied); the server never reads it, only the published Parquet snapshots.
import fs from 'node:fs/promises';
import { openDuckDB, type DuckDB } from '../../core/infra/duckdb.ts';
import type { DataDirLayout } from '../../core/infra/data-dir.ts';
import { POST_COLUMNS_SQL } from '../../core/snapshots/post-schema.ts';

export async function openWorkStore(layout: DataDirLayout, opts: { memoryLimit?: string; threads?: number } = {}): Promise<DuckDB> {
  await fs.mkdir(layout.work, { recursive: true });
  const db = await openDuckDB(layout.workDb, {
    memoryLimit: opts.memoryLimit ?? '3GB',
    threads: opts.threads,
    tempDirectory: `${layout.work}/duckdb-tmp`,
  });
  await db.run(`SET TimeZone = 'UTC'`);
  // FSST string compression cost ~35% of insert time at 200k-record batches; the work store is
  // internal (snapshots are zstd Parquet), so it trades some disk for ingest speed.
  await db.run(`SET disabled_compression_methods = 'fsst'`);
  await db.run(`CREATE TABLE IF NOT EXISTS posts (${POST_COLUMNS_SQL},
    source_sha256 VARCHAR NOT NULL,
    source_record BIGINT NOT NULL,
    first_ingested_at TIMESTAMPTZ NOT NULL,
    updated_at TIMESTAMPTZ NOT NULL)`);
  await db.run(`CREATE TABLE IF NOT EXISTS ingested_files (
    sha256 VARCHAR PRIMARY KEY,
    path VARCHAR NOT NULL,
    format VARCHAR NOT NULL,
    bytes BIGINT NOT NULL,
    status VARCHAR NOT NULL,          -- 'ingested' | 'unreadable'
    error VARCHAR,
    read BIGINT NOT NULL,
    accepted BIGINT NOT NULL,
    updated BIGINT NOT NULL,
    quarantined BIGINT NOT NULL,
    ingested_at TIMESTAMPTZ NOT NULL)`);
  // Deletions are final (ingest/merge.ts): a uuid here never becomes a post again.
  // The sha256 of each landing file as last hashed, with the size and mtime it had (ingest/discover.ts).
  await db.run(`CREATE TABLE IF NOT EXISTS landing_hashes (
    path VARCHAR PRIMARY KEY, bytes BIGINT NOT NULL, mtime_ms DOUBLE NOT NULL, sha256 VARCHAR NOT NULL, hashed_at_ms DOUBLE NOT NULL)`);
  await db.run(`CREATE TABLE IF NOT EXISTS deletions (
    uuid VARCHAR PRIMARY KEY, observed_at TIMESTAMPTZ, source_sha256 VARCHAR NOT NULL, recorded_at TIMESTAMPTZ NOT NULL)`);
  // One row per stage run that changed data; later stages compare versions to skip work.
  await db.run(`CREATE TABLE IF NOT EXISTS stage_state (
    stage VARCHAR PRIMARY KEY, version BIGINT NOT NULL, finished_at TIMESTAMPTZ NOT NULL, detail JSON)`);
  return db;
}

export async function bumpStageVersion(db: DuckDB, stage: string, detail: unknown): Promise<number> {
  const rows = await db.all<{ version: number }>(
    `INSERT INTO stage_state VALUES (?, 1, now(), ?::JSON)
     ON CONFLICT (stage) DO UPDATE SET version = stage_state.version + 1, finished_at = now(), detail = excluded.detail
     RETURNING version`,
    [stage, JSON.stringify(detail)],
  );
  return Number(rows[0]?.version ?? 0);
}
