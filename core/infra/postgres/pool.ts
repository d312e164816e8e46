// A PostgreSQL connection pool (node-postgres) for the parts that outgrow one machine: the
// ledger, the job queue, the serving layer's shared state. bigint columns (money in
// micro-credits, sequence numbers) come back as JS numbers: every one of them stays far below
// 2^53 (money.ts caps amounts at 1e15 micro), so the conversion is exact.
import pg from 'pg';

const INT8_OID = 20;
const INT8_ARRAY_OID = 1016;
const int8Array = pg.types.getTypeParser(INT8_ARRAY_OID as never, 'text') as (v: string) => Array<string | null>;
const types = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') => {
    if (format === 'binary') return pg.types.getTypeParser(oid, format);
    if (oid === INT8_OID) return (v: string) => Number(v);
    if (oid === INT8_ARRAY_OID) return (v: string) => int8Array(v).map((x) => (x === null ? null : Number(x)));
    return pg.types.getTypeParser(oid, format);
  }) as typeof pg.types.getTypeParser,
};

export type PgPool = pg.Pool;

/**
 * How long a new connection may take before the query that asked for it fails: without a bound
 * (node-postgres' default), a database behind a dead network holds every request until TCP gives
 * up, minutes later; with it, the request meets a connection loss (connection-loss.ts) in seconds.
 */
export const CONNECT_TIMEOUT_MS = 5_000;
/**
 * How long a statement's answer may take before it fails ("Query read timeout"): a server that
 * hangs (stopped, a network dropping packets) would otherwise hold the request, and its pooled
 * connection, forever. Far above any statement of ours (milliseconds; a migration on a fresh database, well under a second).
 */
export const QUERY_TIMEOUT_MS = 10_000;

interface PoolOptions {
  /** Connections at most (node-postgres' `max`). */
  max?: number;
  /** Shown in pg_stat_activity. */
  applicationName?: string;
}

export function createPool(databaseUrl: string, o: PoolOptions = {}): PgPool {
  const pool = new pg.Pool({
    connectionString: databaseUrl,
    max: o.max ?? 10,
    application_name: o.applicationName ?? 'content-intelligence',
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    query_timeout: QUERY_TIMEOUT_MS,
    keepAlive: true,
    types,
  });
  // An idle connection that dies (server restart, network) must not crash the process; the next
  // query opens a new one.
  pool.on('error', () => {});
  return pool;
}

/** DATABASE_URL without its password, for logs and errors. */
export function redactUrl(databaseUrl: string): string {
  try {
    const u = new URL(databaseUrl);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return '(unparseable DATABASE_URL)';
  }
}

/**
 * A connection taken from the pool for several statements. While it is out, the pool listens for
 * none of its errors: a server that goes away between two statements would emit an 'error' nobody
 * hears, and the process would exit. The next statement fails instead (and the work with it).
 */
export async function checkOut(pool: PgPool): Promise<pg.PoolClient> {
  const client = await pool.connect();
  const ignore = () => {};
  client.on('error', ignore);
  const release = client.release.bind(client);
  client.release = (err?: Error | boolean) => {
    client.removeListener('error', ignore);
    release(err);
  };
  return client;
}

/** `work` on one connection inside BEGIN ... COMMIT, rolled back if it throws: both or neither of its writes. */
export async function inTransaction<T>(pool: PgPool, work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await checkOut(pool);
  try {
    await client.query('BEGIN');
    const out = await work(client);
    await client.query('COMMIT');
    return out;
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  } finally {
    client.release();
  }
}
