// The ingest stage: every new landing file (by sha256) is read, validated, normalised and merged
// into the work store in one DuckDB transaction, its rejected records written to quarantine
// first. A file is never ingested twice, and a kill -9 at any point either leaves the file
// un-ingested (it is retried next run) or fully recorded.
import fs from 'node:fs/promises';
import path from 'node:path';
import { num, sqlString, type DuckDB } from '../../core/infra/duckdb.ts';
import { failpoint } from '../../core/infra/failpoints.ts';
import type { Stage, StageContext, StageSummary } from '../context/stage-context.ts';
import { StageAborted } from '../context/stage-context.ts';
import { withQueryProgress } from '../context/progress.ts';
import { bumpStageVersion } from '../store/work-store.ts';
import { discoverLandingFiles, type LandingFile } from './discover.ts';
import { mergeValid } from './merge.ts';
import { quarantineReasons, writeQuarantine } from './quarantine.ts';
import { readRecords } from './read-records.ts';
import { validationSql } from './validate-sql.ts';

interface FileReport {
  file: string;
  sha256: string;
  format: string;
  status: 'ingested' | 'unreadable';
  error?: string;
  read: number;
  accepted: number;
  updated: number;
  quarantined: number;
  /** Quarantined records by the field their first reason names (quarantine-reasons.ts). */
  quarantinedBy: Record<string, number>;
  countsChanged: number;
  /** Deletion records accepted, and the stored posts they removed. */
  deletions: number;
  deleted: number;
  /** Valid records of a deleted uuid, not ingested. */
  ofDeleted: number;
  quarantineFile?: string;
  ms: number;
}

/** The ingest stage's summary (perFile is left out of the log line). */
interface IngestReport extends StageSummary {
  files: number;
  skippedFiles: number;
  read: number;
  accepted: number;
  updated: number;
  quarantined: number;
  quarantinedBy: Record<string, number>;
  deletions: number;
  deleted: number;
  ofDeleted: number;
  unreadableFiles: number;
  posts: number;
  perFile: FileReport[];
}

async function markMediaUniverse(db: DuckDB, root: string, landing: string): Promise<void> {
  // Every file under landing/, relative to DATA_DIR: media references are checked against this.
  await db.run(`CREATE OR REPLACE TEMP TABLE landing_files AS
    SELECT substr(file, ${root.length + 2}) AS rel FROM glob(${sqlString(path.join(landing, '**'))})`);
}

/**
 * Precomputed embeddings must all have one dimension per kind: the configured one, else the one
 * already stored, else the most common one in this file. Other lengths are quarantined.
 */
async function checkEmbeddingDims(ctx: StageContext, db: DuckDB): Promise<void> {
  for (const [col, configured, env] of [
    ['text_embedding', ctx.config.TEXT_EMBEDDING_DIM, 'TEXT_EMBEDDING_DIM'],
    ['visual_embedding', ctx.config.VISUAL_EMBEDDING_DIM, 'VISUAL_EMBEDDING_DIM'],
  ] as const) {
    let dim = configured ?? null;
    let from: string = env;
    if (dim === null) {
      const [stored] = await db.all(`SELECT len(${col}) AS d FROM posts WHERE ${col} IS NOT NULL LIMIT 1`);
      if (stored) ((dim = num(stored.d)), (from = 'the embeddings already ingested'));
    }
    if (dim === null) {
      const [mode] = await db.all(`SELECT len(${col}) AS d, count(*) AS n FROM checked2 WHERE ${col} IS NOT NULL AND len(reasons) = 0
        GROUP BY d ORDER BY n DESC, d LIMIT 1`);
      if (mode) ((dim = num(mode.d)), (from = 'the most common dimension in this file'));
    }
    if (dim === null) continue;
    await db.run(`UPDATE checked2 SET reasons = list_append(reasons, '${col} has ' || len(${col}) || ' dimensions, expected ${dim} (${from})')
      WHERE ${col} IS NOT NULL AND len(${col}) <> ${dim}`);
  }
}

async function ingestOne(ctx: StageContext, db: DuckDB, f: LandingFile, onPercent: (pct: number) => void): Promise<FileReport> {
  const t0 = performance.now();
  const ingestedAt = new Date().toISOString();
  const fileDirRel = path.relative(ctx.layout.root, path.dirname(f.path)).split(path.sep).join('/');
  const base = { file: f.rel, sha256: f.sha256, format: f.format };
  try {
    await readRecords(db, f.path, f.format, f.bytes);
  } catch (err) {
    // The file as a whole could not be read (corrupt Parquet, bad CSV header): record it, say why,
    // and move on; its checksum keeps it from being retried until the file changes.
    const error = (err as Error).message.split('\n')[0]!.slice(0, 500);
    const quarantineFile = await writeQuarantine(db, ctx.layout, f, { wholeFileError: error });
    await db.run(`INSERT INTO ingested_files VALUES (?, ?, ?, ?, 'unreadable', ?, 0, 0, 0, 0, ?::TIMESTAMPTZ)`, [
      f.sha256,
      f.rel,
      f.format,
      f.bytes,
      error,
      ingestedAt,
    ]);
    return {
      ...base,
      status: 'unreadable',
      error,
      read: 0,
      accepted: 0,
      updated: 0,
      quarantined: 0,
      quarantinedBy: {},
      countsChanged: 0,
      deletions: 0,
      deleted: 0,
      ofDeleted: 0,
      quarantineFile,
      ms: performance.now() - t0,
    };
  }
  // From here on an error is ours, not the file's: it fails the run and the file is retried.
  // The validation statement is most of a large file's time: report DuckDB's own progress on it.
  await withQueryProgress(db.conn, onPercent, async () => {
    for (const sql of validationSql(fileDirRel)) await db.run(sql);
  });
  await db.run(`CREATE OR REPLACE TEMP TABLE missing_media AS
    SELECT rec, 'media file not found: ' || string_agg(p, ', ' ORDER BY p) AS reason
    FROM (SELECT rec, unnest(media_paths) AS p FROM checked2) m ANTI JOIN landing_files l ON l.rel = m.p
    GROUP BY rec`);
  await db.run(`UPDATE checked2 SET reasons = list_append(reasons, mm.reason) FROM missing_media mm WHERE checked2.rec = mm.rec`);
  await checkEmbeddingDims(ctx, db);

  const [c] = await db.all(`SELECT (SELECT count(*) FROM checked2) + (SELECT count(*) FROM pre_rejected) AS read,
    (SELECT count(*) FROM checked2 WHERE len(reasons) > 0) + (SELECT count(*) FROM pre_rejected) AS quarantined`);
  const read = num(c?.read);
  const quarantined = num(c?.quarantined);
  const quarantinedBy = quarantined > 0 ? await quarantineReasons(db) : {};
  const quarantineFile = quarantined > 0 ? await writeQuarantine(db, ctx.layout, f, {}) : undefined;

  ctx.signal.throwIfAborted();
  await db.run('BEGIN TRANSACTION');
  try {
    const m = await mergeValid(db, f.sha256, ingestedAt);
    await db.run(`INSERT INTO ingested_files VALUES (?, ?, ?, ?, 'ingested', NULL, ?, ?, ?, ?, ?::TIMESTAMPTZ)`, [
      f.sha256,
      f.rel,
      f.format,
      f.bytes,
      read,
      m.accepted,
      m.updated,
      quarantined,
      ingestedAt,
    ]);
    await failpoint('ingest.before-commit', ctx.signal);
    await db.run('COMMIT');
    return {
      ...base,
      status: 'ingested',
      read,
      accepted: m.accepted,
      updated: m.updated,
      quarantined,
      quarantinedBy,
      countsChanged: m.countsChanged,
      deletions: m.deletions,
      deleted: m.deleted,
      ofDeleted: m.ofDeleted,
      quarantineFile,
      ms: performance.now() - t0,
    };
  } catch (err) {
    await db.run('ROLLBACK').catch(() => {});
    throw err;
  }
}

async function runIngest(ctx: StageContext): Promise<IngestReport> {
  const db = await ctx.db();
  await fs.mkdir(ctx.layout.landing, { recursive: true });
  const known = new Set((await db.all<{ sha256: string }>(`SELECT sha256 FROM ingested_files`)).map((r) => r.sha256));
  const hashes = new Map(
    (
      await db.all<{ path: string; bytes: number; mtime_ms: number; sha256: string; hashed_at_ms: number }>(`SELECT * FROM landing_hashes`)
    ).map((r) => [r.path, { bytes: Number(r.bytes), mtimeMs: Number(r.mtime_ms), sha256: r.sha256, hashedAtMs: Number(r.hashed_at_ms) }]),
  );
  const { fresh, skipped, hashed } = await discoverLandingFiles(ctx.layout, known, hashes);
  for (const h of hashed)
    await db.run(`INSERT OR REPLACE INTO landing_hashes VALUES (?, ?, ?, ?, ?)`, [h.rel, h.bytes, h.mtimeMs, h.sha256, h.hashedAtMs]);
  const report: IngestReport = {
    files: fresh.length,
    skippedFiles: skipped,
    read: 0,
    accepted: 0,
    updated: 0,
    quarantined: 0,
    quarantinedBy: {},
    deletions: 0,
    deleted: 0,
    ofDeleted: 0,
    unreadableFiles: 0,
    posts: 0,
    perFile: [],
  };
  if (fresh.length > 0) await markMediaUniverse(db, ctx.layout.root, ctx.layout.landing);

  // Progress in percent of files: file i at p% is i*100 + p.
  const bar = ctx.progress('ingest', fresh.length * 100);
  await db.run(`SET enable_progress_bar = true`);
  await db.run(`SET enable_progress_bar_print = false`);
  try {
    for (const [i, f] of fresh.entries()) {
      if (ctx.signal.aborted) throw new StageAborted('ingest');
      const r = await ingestOne(ctx, db, f, (pct) => bar.update(i * 100 + Math.round(pct)));
      ctx.log.info({ stage: 'ingest', ...r, ms: Math.round(r.ms) }, 'file ingested');
      report.perFile.push(r);
      report.read += r.read;
      report.accepted += r.accepted;
      report.updated += r.updated;
      report.quarantined += r.quarantined;
      for (const [reason, n] of Object.entries(r.quarantinedBy)) report.quarantinedBy[reason] = (report.quarantinedBy[reason] ?? 0) + n;
      report.deletions += r.deletions;
      report.deleted += r.deleted;
      report.ofDeleted += r.ofDeleted;
      if (r.status === 'unreadable') report.unreadableFiles++;
      bar.update((i + 1) * 100);
    }
  } finally {
    bar.stop();
  }
  const [p] = await db.all(`SELECT count(*) AS n FROM posts`);
  report.posts = num(p?.n);
  if (report.accepted + report.updated + report.deletions > 0) {
    await bumpStageVersion(db, 'ingest', {
      read: report.read,
      accepted: report.accepted,
      updated: report.updated,
      quarantined: report.quarantined,
      deletions: report.deletions,
      deleted: report.deleted,
    });
  }
  return report;
}

export const ingestStage: Stage<'ingest', IngestReport> = {
  name: 'ingest',
  description: 'validate and merge new landing files (NDJSON, CSV, Parquet) into the work store; bad records to quarantine',
  run: runIngest,
};
