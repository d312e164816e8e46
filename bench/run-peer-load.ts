// Peer for the ingest benchmark, in the same run: DuckDB's own bulk load of the same files
// (read_json_auto / read_csv_auto / read_parquet into a table) with no validation, quarantine,
// normalisation or upsert. It is the ceiling a validating ingest on DuckDB can approach.
import fs from 'node:fs';
import path from 'node:path';
import { openDuckDB, sqlString } from '../core/infra/duckdb.ts';

const [dir, memoryLimit = '3GB'] = process.argv.slice(2);
if (!dir) throw new Error('usage: run-peer-load.ts DIR');
const files = fs
  .readdirSync(dir)
  .filter((f) => /\.(ndjson|csv|parquet)$/.test(f))
  .map((f) => path.join(dir, f));
const db = await openDuckDB(':memory:', { memoryLimit });
const t0 = performance.now();
const reader = (f: string) =>
  f.endsWith('.ndjson')
    ? `read_json_auto(${sqlString(f)}, format = 'newline_delimited', ignore_errors = true)`
    : f.endsWith('.csv')
      ? `read_csv_auto(${sqlString(f)}, ignore_errors = true)`
      : `read_parquet(${sqlString(f)})`;
await db.run(
  `CREATE TABLE posts AS SELECT * FROM ${files
    .map(reader)
    .map((r) => `(SELECT * FROM ${r})`)
    .join(' UNION ALL BY NAME ')}`,
);
const [c] = await db.all(`SELECT count(*)::BIGINT AS n FROM posts`);
process.stdout.write(
  JSON.stringify({ ms: performance.now() - t0, rows: Number(c!.n), maxRssMiB: process.resourceUsage().maxRSS / 1024 }) + '\n',
);
