// One way to open DuckDB and read rows as plain JSON-safe objects, shared by the pipeline, the
// server and the tests.
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';

export type { DuckDBConnection };
export type Row = Record<string, unknown>;

export interface DuckDBOptions {
  threads?: number;
  memoryLimit?: string;
  tempDirectory?: string;
}

export interface DuckDB {
  instance: DuckDBInstance;
  conn: DuckDBConnection;
  /** Rows as JSON-friendly objects (BIGINT -> string, timestamps -> ISO strings). */
  all<T extends Row = Row>(sql: string, params?: unknown[]): Promise<T[]>;
  /**
   * The result as columns of JS values (DOUBLE/INTEGER -> number, BIGINT -> bigint, VARCHAR ->
   * string, lists -> arrays): for many rows, several times cheaper than row objects.
   */
  columns(sql: string, params?: unknown[]): Promise<Record<string, unknown[]>>;
  run(sql: string, params?: unknown[]): Promise<void>;
  close(): void;
}

// DUCKDB_TRACE=1 prints every statement's time to stderr: the way to find where a stage spends it.
const TRACE = process.env.DUCKDB_TRACE === '1';

async function traced<T>(sql: string, work: () => Promise<T>): Promise<T> {
  if (!TRACE) return work();
  const t0 = performance.now();
  try {
    return await work();
  } finally {
    process.stderr.write(`[duckdb] ${(performance.now() - t0).toFixed(0).padStart(6)} ms  ${sql.replace(/\s+/g, ' ').slice(0, 110)}\n`);
  }
}

export async function openDuckDB(file = ':memory:', opts: DuckDBOptions = {}): Promise<DuckDB> {
  const options: Record<string, string> = {};
  if (opts.threads) options.threads = String(opts.threads);
  if (opts.memoryLimit) options.memory_limit = opts.memoryLimit;
  if (opts.tempDirectory) options.temp_directory = opts.tempDirectory;
  const instance = await DuckDBInstance.create(file, options);
  const conn = await instance.connect();
  return {
    instance,
    conn,
    async all<T extends Row = Row>(sql: string, params?: unknown[]) {
      const reader = await traced(sql, () => conn.runAndReadAll(sql, params as never));
      return reader.getRowObjectsJson() as T[];
    },
    async columns(sql: string, params?: unknown[]) {
      const reader = await traced(sql, () => conn.runAndReadAll(sql, params as never));
      return reader.getColumnsObjectJS() as Record<string, unknown[]>;
    },
    async run(sql: string, params?: unknown[]) {
      await traced(sql, () => conn.run(sql, params as never));
    },
    close() {
      conn.closeSync();
      instance.closeSync();
    },
  };
}

/** Quote a string as a SQL literal (for file paths in table functions, which cannot take parameters). */
export function sqlString(s: string): string {
  return `'${s.replaceAll("'", "''")}'`;
}

/** Coerce a DuckDB JSON value (BIGINT arrives as a string) to a JS number. */
export function num(v: unknown): number {
  return typeof v === 'number' ? v : Number(v ?? 0);
}
