// One way to open DuckDB and read rows as plain JSON-safe objects, shared by the pipeline, the
// server and the tests.
import {
  DOUBLE,
  DuckDBDataChunk,
  DuckDBInstance,
  FLOAT,
  INTEGER,
  UTINYINT,
  type DuckDBConnection,
  type DuckDBType,
} from '@duckdb/node-api';

export type { DuckDBConnection };
export type Row = Record<string, unknown>;

interface DuckDBOptions {
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
  /**
   * The result's numeric columns (DOUBLE, FLOAT, INTEGER, SMALLINT, TINYINT and their unsigned
   * kinds) as typed arrays, copied chunk by chunk from DuckDB's own vectors: no JS value per cell,
   * so a million rows cost milliseconds, not the second columns() takes. NULL reads as NaN in a
   * float column and fails in an integer one (coalesce it in the SQL); BIGINT and other types fail
   * (cast them).
   */
  numbers(sql: string): Promise<Record<string, NumericColumn>>;
  /**
   * Append columns of equal length to an existing table whose columns are, in order, of the
   * arrays' kinds (Float64Array DOUBLE, Float32Array FLOAT, Int32Array INTEGER, Uint8Array
   * UTINYINT): whole vectors are copied in, no JS value per cell.
   */
  appendNumbers(table: string, columns: readonly NumericColumn[]): Promise<void>;
  run(sql: string, params?: unknown[]): Promise<void>;
  close(): void;
}

type NumericColumn = Float64Array | Float32Array | Int32Array | Int16Array | Int8Array | Uint32Array | Uint16Array | Uint8Array;

const NUMERIC = [Float64Array, Float32Array, Int32Array, Int16Array, Int8Array, Uint32Array, Uint16Array, Uint8Array];

/** A vector of @duckdb/node-api as this reader uses it: its items, and its validity bits (null: all valid). */
interface RawVector {
  items?: unknown;
  validity?: { data: BigUint64Array | null; itemValid(i: number): boolean };
}

const VECTOR = 2048;

function typeOf(c: NumericColumn): DuckDBType {
  if (c instanceof Float64Array) return DOUBLE;
  if (c instanceof Float32Array) return FLOAT;
  if (c instanceof Int32Array) return INTEGER;
  if (c instanceof Uint8Array) return UTINYINT;
  throw new Error(`appendNumbers takes Float64Array, Float32Array, Int32Array or Uint8Array, not ${c.constructor.name}`);
}

async function appendNumbers(conn: DuckDBConnection, table: string, columns: readonly NumericColumn[]): Promise<void> {
  const n = columns[0]?.length ?? 0;
  if (columns.some((c) => c.length !== n)) throw new Error('appendNumbers: columns of different lengths');
  const types = columns.map(typeOf);
  const app = await conn.createAppender(table);
  try {
    for (let at = 0; at < n; at += VECTOR) {
      const rows = Math.min(VECTOR, n - at);
      const chunk = DuckDBDataChunk.create(types, rows);
      columns.forEach((c, i) => {
        const v = chunk.getColumnVector(i) as unknown as RawVector & { flush(): void };
        (v.items as NumericColumn).set(c.subarray(at, at + rows) as never);
        v.flush();
      });
      app.appendDataChunk(chunk);
    }
    app.flushSync();
  } finally {
    app.closeSync();
  }
}

async function readNumbers(conn: DuckDBConnection, sql: string): Promise<Record<string, NumericColumn>> {
  // Materialised (conn.run), not streamed: a streamed result executes per chunk, several times slower.
  const result = await conn.run(sql);
  const names = result.columnNames();
  const parts: NumericColumn[][] = names.map(() => []);
  for (;;) {
    const chunk = await result.fetchChunk();
    if (!chunk || chunk.rowCount === 0) break;
    names.forEach((name, c) => {
      const v = chunk.getColumnVector(c) as unknown as RawVector;
      const items = v.items as NumericColumn;
      if (!NUMERIC.some((T) => items instanceof T)) throw new Error(`column ${name} is not a numeric column (cast it in the SQL)`);
      // The vector's memory belongs to the chunk: copy it.
      const copy = items.slice() as NumericColumn;
      const bits = v.validity?.data;
      if (bits) {
        // Validity bits as 32-bit words (BigInt per item is slow); a NULL is a 0 bit.
        const words = new Uint32Array(bits.buffer, bits.byteOffset, Math.ceil(copy.length / 32));
        const float = copy instanceof Float64Array || copy instanceof Float32Array;
        words.forEach((w, k) => {
          if (w === 0xffffffff) return;
          for (let i = k * 32; i < Math.min(copy.length, k * 32 + 32); i++) {
            if ((w >>> (i - k * 32)) & 1) continue;
            if (!float) throw new Error(`column ${name} has a NULL (coalesce it in the SQL)`);
            copy[i] = NaN;
          }
        });
      }
      parts[c]!.push(copy);
    });
  }
  const out: Record<string, NumericColumn> = {};
  names.forEach((name, c) => {
    const list = parts[c]!;
    const n = list.reduce((a, p) => a + p.length, 0);
    const T = (list[0]?.constructor ?? Float64Array) as new (n: number) => NumericColumn;
    const all = new T(n);
    let at = 0;
    for (const p of list) (all.set(p as never, at), (at += p.length));
    out[name] = all;
  });
  return out;
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
    async appendNumbers(table: string, columns: readonly NumericColumn[]) {
      await traced(`APPEND ${table}`, () => appendNumbers(conn, table, columns));
    },
    async numbers(sql: string) {
      return traced(sql, () => readNumbers(conn, sql));
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

/** The columns of FROM-able SQL: a file written before a column existed lacks it (its readers take NULL for it). */
export async function columnNames(db: Pick<DuckDB, 'all'>, from: string): Promise<Set<string>> {
  const rows = await db.all<{ column_name: string }>(`SELECT column_name FROM (DESCRIBE SELECT * FROM ${from})`);
  return new Set(rows.map((r) => r.column_name));
}

/** Coerce a DuckDB JSON value (BIGINT arrives as a string) to a JS number. */
export function num(v: unknown): number {
  return typeof v === 'number' ? v : Number(v ?? 0);
}
