// Per-row artifact tables (enrichment, visual elements, neighbour scores) written as plain
// Parquet through DuckDB: rows go to a temporary NDJSON file and are read back with declared
// column types, so an empty snapshot still yields a table with the right columns.
import path from 'node:path';
import { sqlString } from '../core/duckdb.ts';
import { writeFileAtomic } from '../core/durable-fs.ts';
import type { StageContext } from './stage.ts';

/** Write `rows` (objects with a row_id) to artifacts/<name>.parquet, ordered by row_id. */
export async function writeRowTable(ctx: StageContext, name: string, columns: Record<string, string>, rows: unknown[]): Promise<void> {
  const db = await ctx.db();
  const tmp = path.join(ctx.layout.work, 'intermediate', `${name}.ndjson`);
  const out = path.join(ctx.layout.artifacts, `${name}.parquet`);
  const spec = `{${Object.entries(columns).map(([c, t]) => `${c}: '${t}'`).join(', ')}}`;
  let source: string;
  if (rows.length > 0) {
    await writeFileAtomic(tmp, rows.map((r) => JSON.stringify(r)).join('\n') + '\n');
    source = `SELECT * FROM read_json(${sqlString(tmp)}, format = 'newline_delimited', columns = ${spec}) ORDER BY row_id`;
  } else {
    source = `SELECT ${Object.entries(columns).map(([c, t]) => `NULL::${t} AS ${c}`).join(', ')} WHERE false`;
  }
  await db.run(`COPY (${source}) TO ${sqlString(out)} (FORMAT parquet)`);
}
