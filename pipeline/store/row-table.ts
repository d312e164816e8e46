// Per-row artifact tables (enrichment, visual elements, neighbour scores) written as plain
// Parquet through DuckDB: rows go to a temporary NDJSON file and are read back with declared
// column types, so an empty snapshot still yields a table with the right columns.
import path from 'node:path';
import { sqlString } from '../../core/infra/duckdb.ts';
import fs from 'node:fs/promises';
import type { StageContext } from '../context/stage-context.ts';

const WRITE_ROWS = 50_000;

/** Write `rows` to artifacts/<name>.parquet (or to `out`), ordered by the first column (row_id, or ci for computed rows). */
export async function writeRowTable(
  ctx: StageContext,
  name: string,
  columns: Record<string, string>,
  rows: unknown[],
  out = path.join(ctx.layout.artifacts, `${name}.parquet`),
): Promise<void> {
  const db = await ctx.db();
  const tmp = path.join(ctx.layout.work, 'intermediate', `${name}.ndjson`);
  const spec = `{${Object.entries(columns)
    .map(([c, t]) => `${c}: '${t}'`)
    .join(', ')}}`;
  let source: string;
  if (rows.length > 0) {
    // Written in pieces: a million rows joined into one string could pass V8's string limit.
    await fs.mkdir(path.dirname(tmp), { recursive: true });
    const fh = await fs.open(tmp, 'w');
    try {
      for (let at = 0; at < rows.length; at += WRITE_ROWS) {
        await fh.write(
          rows
            .slice(at, at + WRITE_ROWS)
            .map((r) => JSON.stringify(r))
            .join('\n') + '\n',
        );
      }
    } finally {
      await fh.close();
    }
    source = `SELECT * FROM read_json(${sqlString(tmp)}, format = 'newline_delimited', columns = ${spec}) ORDER BY ${Object.keys(columns)[0]}`;
  } else {
    source = `SELECT ${Object.entries(columns)
      .map(([c, t]) => `NULL::${t} AS ${c}`)
      .join(', ')} WHERE false`;
  }
  await db.run(`COPY (${source}) TO ${sqlString(out)} (FORMAT parquet)`);
}
