// Rejected records go to DATA_DIR/quarantine/<sha12>-<file>.ndjson, one JSON line each:
// {source_file, source_sha256, record, reasons, original}. The name derives from the input's
// checksum, so a crashed ingest that is retried overwrites the same file instead of doubling it.
import fs from 'node:fs/promises';
import path from 'node:path';
import type { DataDirLayout } from '../../core/infra/data-dir.ts';
import { sqlString, type DuckDB } from '../../core/infra/duckdb.ts';
import { fsyncDir, fsyncPath } from '../../core/infra/durable-fs.ts';
import type { LandingFile } from './discover.ts';

function quarantineFileFor(layout: DataDirLayout, f: LandingFile): string {
  const safe = f.rel.replace(/[^A-Za-z0-9._-]+/g, '_');
  return path.join(layout.quarantine, `${f.sha256.slice(0, 12)}-${safe}.rejects.ndjson`);
}

export async function writeQuarantine(
  db: DuckDB,
  layout: DataDirLayout,
  f: LandingFile,
  opts: { wholeFileError?: string },
): Promise<string> {
  await fs.mkdir(layout.quarantine, { recursive: true });
  const out = quarantineFileFor(layout, f);
  const tmp = `${out}.tmp`;
  const head = `SELECT ${sqlString(f.rel)} AS source_file, ${sqlString(f.sha256)} AS source_sha256`;
  const query =
    opts.wholeFileError !== undefined
      ? `${head}, NULL::BIGINT AS record, [${sqlString(`file could not be read: ${opts.wholeFileError}`)}] AS reasons, NULL::VARCHAR AS original`
      : `${head}, rec AS record, reasons, raw AS original FROM (
         SELECT rec, reasons, raw FROM checked2 JOIN records USING (rec) WHERE len(reasons) > 0
         UNION ALL SELECT rec, [reason], raw FROM pre_rejected) ORDER BY rec`;
  await db.run(`COPY (${query}) TO ${sqlString(tmp)} (FORMAT json)`);
  await fsyncPath(tmp);
  await fs.rename(tmp, out);
  await fsyncDir(layout.quarantine);
  return out;
}

/**
 * A rejection's class for /metrics: the field its reason names ("published_at is not a valid ISO
 * 8601 date-time" -> published_at, "missing uuid" -> uuid), or what kind of record it was not
 * (json, csv, unreadable). A bounded set of labels, unlike the reasons' texts.
 */
function reasonClass(reason: string): string {
  if (reason.startsWith('missing ')) return reason.split(' ')[1] ?? 'record';
  if (/^malformed JSON|^record is not a JSON object/.test(reason)) return 'json';
  if (reason.startsWith('malformed CSV row')) return 'csv';
  if (reason.startsWith('unreadable line')) return 'unreadable';
  if (reason.startsWith('media file not found')) return 'media';
  return /^[a-z_]+/.exec(reason)?.[0] ?? 'other';
}

/** This file's quarantined records by the class of their first reason. */
export async function quarantineReasons(db: DuckDB): Promise<Record<string, number>> {
  const rows = await db.all<{
    reason: string;
    n: number;
  }>(`SELECT reasons[1] AS reason, count(*) AS n FROM checked2 WHERE len(reasons) > 0 GROUP BY 1
    UNION ALL SELECT reason, count(*) AS n FROM pre_rejected GROUP BY 1`);
  const out: Record<string, number> = {};
  for (const r of rows) out[reasonClass(r.reason)] = (out[reasonClass(r.reason)] ?? 0) + Number(r.n);
  return out;
}
