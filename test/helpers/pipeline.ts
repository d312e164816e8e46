// Runs pipeline stages in-process against a test data directory, and reads what they produced.
import fs from 'node:fs';
import path from 'node:path';
import { loadConfig } from '../../core/config.ts';
import { dataDirLayout } from '../../core/data-dir.ts';
import { openDuckDB, sqlString, type Row } from '../../core/duckdb.ts';
import { generationDir, readCurrent } from '../../core/generations.ts';
import { createLogger } from '../../core/log.ts';
import { resolveStages, runStages, type RunResult } from '../../pipeline/runner.ts';
import { ROOT } from './child.ts';
import { tmpDir } from './tmp.ts';

export const AS_OF = new Date('2026-11-01T00:00:00Z');

/** A fresh data dir whose landing holds the committed sample (posts and media). */
export function sampleDataDir(): string {
  const d = tmpDir();
  fs.cpSync(path.join(ROOT, 'fixtures', 'sample', 'posts'), path.join(d, 'landing', 'sample'), { recursive: true });
  return d;
}

export async function runPipeline(
  dataDir: string,
  stages: string[] = ['run'],
  asOf = AS_OF,
  env: Record<string, string> = {},
  opts: { allowRewind?: boolean } = {},
): Promise<RunResult> {
  const config = loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'silent', ...env });
  return runStages(resolveStages(stages), { config, log: createLogger('test', 'silent'), asOf, tty: false, ...opts });
}

export function summaryOf(r: RunResult, stage: string): Record<string, unknown> {
  const s = r.stages.find((x) => x.stage === stage);
  if (!s) throw new Error(`no stage ${stage} in run`);
  return s.summary;
}

/** Rows of a table of the current generation, read back with a fresh DuckDB. */
export async function readSnapshot(dataDir: string, table: string, select = '*', where = ''): Promise<Row[]> {
  const layout = dataDirLayout(dataDir);
  const gen = await readCurrent(layout);
  if (!gen) throw new Error('no current generation');
  const db = await openDuckDB();
  try {
    await db.run(`SET TimeZone = 'UTC'`);
    return await db.all(`SELECT ${select} FROM read_parquet(${sqlString(`${generationDir(layout, gen)}/${table}.parquet`)}) ${where}`);
  } finally {
    db.close();
  }
}

/** Column names of a table of the current generation, in order. */
export async function describeSnapshot(dataDir: string, table: string): Promise<Array<{ column_name: string }>> {
  const layout = dataDirLayout(dataDir);
  const gen = await readCurrent(layout);
  if (!gen) throw new Error('no current generation');
  const db = await openDuckDB();
  try {
    return await db.all(
      `SELECT column_name FROM (DESCRIBE SELECT * FROM read_parquet(${sqlString(`${generationDir(layout, gen)}/${table}.parquet`)}))`,
    );
  } finally {
    db.close();
  }
}
