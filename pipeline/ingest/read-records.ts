// Reads one landing file into the temp table `records(rec, raw)`: one row per input record,
// raw being the record as JSON text whatever the format, so validation is written once. `rec` is the 1-based record number in the
// file (NDJSON: non-blank line; CSV: data row, header excluded; Parquet: row). Records the format
// itself rejects (a CSV row with the wrong column count) go to `pre_rejected(rec, raw, reason)`.
import { createReadStream } from 'node:fs';
import readline from 'node:readline';
import { createGunzip } from 'node:zlib';
import { sqlString, type DuckDB } from '../../core/infra/duckdb.ts';

export type LandingFormat = 'ndjson' | 'csv' | 'parquet';

export function formatOf(file: string): LandingFormat | null {
  const f = file.toLowerCase().replace(/\.gz$/, '');
  if (f.endsWith('.ndjson') || f.endsWith('.jsonl')) return 'ndjson';
  if (f.endsWith('.csv')) return 'csv';
  if (f.endsWith('.parquet') && !file.toLowerCase().endsWith('.gz')) return 'parquet';
  return null;
}

// JSON text cannot contain raw control bytes, so a line holding this 4-byte sequence is already
// malformed; using it as the "delimiter" makes DuckDB's CSV reader a fast, parallel line reader.
// Lines it cannot read (invalid UTF-8) land in its rejects table instead of failing the file.
const LINE_READER = `header = false, columns = {'raw': 'VARCHAR'}, delim = E'\\x01\\x02\\x03\\x04', quote = '',
  escape = '', auto_detect = false, strict_mode = false, max_line_size = 33554432,
  store_rejects = true, rejects_table = 'line_rejects', rejects_scan = 'line_reject_scans'`;

const EMPTY_RECORDS = [
  `CREATE OR REPLACE TEMP TABLE records (rec BIGINT, raw VARCHAR)`,
  `CREATE OR REPLACE TEMP TABLE pre_rejected (rec BIGINT, raw VARCHAR, reason VARCHAR)`,
];

/**
 * Number the rows a reader returned (`read_rows(ord, raw)`, in file order) around the rows it
 * rejected (`pre_rejected.rec`): the k-th returned row is number k + (rejected rows before it),
 * and reject i precedes returned row k iff r_i - i < k.
 */
async function numberAroundRejects(db: DuckDB): Promise<void> {
  await db.run(`CREATE OR REPLACE TEMP TABLE reject_gaps AS
    SELECT rec - row_number() OVER (ORDER BY rec) AS g, row_number() OVER (ORDER BY rec) AS i FROM pre_rejected`);
  await db.run(`CREATE OR REPLACE TEMP TABLE records AS
    SELECT ord + coalesce((SELECT max(i) FROM reject_gaps WHERE g < ord), 0) AS rec, raw FROM read_rows`);
}

/** NDJSON: the record number is the line number; blank lines are numbered but are not records. */
async function readNdjson(db: DuckDB, file: string): Promise<void> {
  await db.run(`DROP TABLE IF EXISTS line_rejects`);
  await db.run(`DROP TABLE IF EXISTS line_reject_scans`);
  await db.run(`CREATE OR REPLACE TEMP TABLE read_rows AS
    SELECT row_number() OVER () AS ord, raw FROM read_csv(${sqlString(file)}, ${LINE_READER})`);
  await db.run(`CREATE OR REPLACE TEMP TABLE pre_rejected AS
    SELECT line AS rec, any_value(csv_line) AS raw, 'unreadable line: ' || string_agg(DISTINCT error_message, '; ') AS reason
    FROM line_rejects GROUP BY line`);
  const [r] = await db.all(`SELECT count(*) AS n FROM pre_rejected`);
  if (Number(r?.n) === 0) {
    // The common case: numbering is already the line number; rename rather than copy.
    await db.run(`DROP TABLE IF EXISTS records`);
    await db.run(`ALTER TABLE read_rows RENAME COLUMN ord TO rec`);
    await db.run(`ALTER TABLE read_rows RENAME TO records`);
  } else {
    await numberAroundRejects(db);
  }
  await db.run(`DELETE FROM records WHERE raw IS NULL OR regexp_full_match(raw, '\\s*')`);
}

/** The header's column names, read by us: DuckDB's dialect sniffer gives up on some valid files. */
async function csvHeader(file: string): Promise<string[]> {
  const input = createReadStream(file);
  const stream = file.toLowerCase().endsWith('.gz') ? input.pipe(createGunzip()) : input;
  const rl = readline.createInterface({ input: stream, crlfDelay: Infinity });
  try {
    for await (const line of rl) return parseCsvLine(line.replace(/^\uFEFF/, ''));
    return [];
  } finally {
    rl.close();
    input.destroy();
  }
}

/** RFC 4180 fields of one line (a header never spans lines). */
export function parseCsvLine(line: string): string[] {
  const out: string[] = [];
  let cur = '';
  let quoted = false;
  for (let i = 0; i < line.length; i++) {
    const ch = line[i];
    if (quoted) {
      if (ch === '"' && line[i + 1] === '"') ((cur += '"'), i++);
      else if (ch === '"') quoted = false;
      else cur += ch;
    } else if (ch === '"') quoted = true;
    else if (ch === ',') (out.push(cur), (cur = ''));
    else cur += ch;
  }
  out.push(cur);
  return out.map((s) => s.trim());
}

async function readCsv(db: DuckDB, file: string): Promise<void> {
  const header = await csvHeader(file);
  const names = header.map((h) => h.toLowerCase());
  if (names.length === 0 || names.some((n) => n === '') || new Set(names).size !== names.length) {
    throw new Error(`CSV header must name every column once (got: ${header.join(',').slice(0, 200)})`);
  }
  const columns = names.map((n) => `${sqlString(n)}: 'VARCHAR'`).join(', ');
  await db.run(`DROP TABLE IF EXISTS csv_rejects`);
  await db.run(`DROP TABLE IF EXISTS csv_reject_scans`);
  await db.run(`CREATE OR REPLACE TEMP TABLE read_rows AS
    SELECT row_number() OVER () AS ord, to_json(t)::VARCHAR AS raw
    FROM read_csv(${sqlString(file)}, header = true, auto_detect = false, columns = {${columns}},
      delim = ',', quote = '"', escape = '"', store_rejects = true,
      rejects_table = 'csv_rejects', rejects_scan = 'csv_reject_scans', max_line_size = 33554432) t`);
  // One row per rejected line (a line can raise several errors); data row number = line - 1.
  await db.run(`CREATE OR REPLACE TEMP TABLE pre_rejected AS
    SELECT line - 1 AS rec, any_value(csv_line) AS raw,
           'malformed CSV row: ' || string_agg(DISTINCT error_message, '; ') AS reason
    FROM csv_rejects GROUP BY line`);
  await numberAroundRejects(db);
}

async function readParquet(db: DuckDB, file: string): Promise<void> {
  await db.run(`CREATE OR REPLACE TEMP TABLE records AS
    SELECT row_number() OVER () AS rec, to_json(t)::VARCHAR AS raw
    FROM read_parquet(${sqlString(file)}) t`);
  await db.run(EMPTY_RECORDS[1]!);
}

export async function readRecords(db: DuckDB, file: string, format: LandingFormat, bytes: number): Promise<void> {
  if (bytes === 0) {
    for (const sql of EMPTY_RECORDS) await db.run(sql);
    return;
  }
  if (format === 'ndjson') return readNdjson(db, file);
  if (format === 'csv') return readCsv(db, file);
  return readParquet(db, file);
}
