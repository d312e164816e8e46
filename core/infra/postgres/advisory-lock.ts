// A PostgreSQL advisory lock held for as long as a piece of work runs: what keeps two machines
// that see the same DATA_DIR (and the same DATABASE_URL) from running the pipeline at once, where
// the lock file alone cannot (its stale-owner check asks about a pid on this machine only). The
// lock lives on a connection of its own and goes with it: a machine that dies mid-run frees it
// when PostgreSQL drops the connection.
import pg from 'pg';
import { LockHeld, type Lock } from '../lock.ts';

export async function acquireAdvisoryLock(databaseUrl: string, name: string): Promise<Lock> {
  const client = new pg.Client({ connectionString: databaseUrl, application_name: `content-intelligence ${name}` });
  client.on('error', () => {});
  await client.connect();
  try {
    const { rows } = await client.query<{ ok: boolean; pid: number | null; since: Date | null }>(
      `SELECT pg_try_advisory_lock(hashtext($1)) AS ok,
              (SELECT a.pid FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
                WHERE l.locktype = 'advisory' AND l.objid = hashtext($1)::oid AND l.granted AND a.pid <> pg_backend_pid() LIMIT 1) AS pid,
              (SELECT a.backend_start FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
                WHERE l.locktype = 'advisory' AND l.objid = hashtext($1)::oid AND l.granted AND a.pid <> pg_backend_pid() LIMIT 1) AS since`,
      [name],
    );
    const r = rows[0]!;
    if (!r.ok)
      throw new LockHeld(
        { pid: r.pid ?? 0, since: r.since?.toISOString() ?? 'unknown' },
        `another process holds the PostgreSQL lock "${name}"`,
      );
  } catch (err) {
    await client.end().catch(() => undefined);
    throw err;
  }
  return {
    release: async () => {
      await client.query('SELECT pg_advisory_unlock(hashtext($1))', [name]).catch(() => undefined);
      await client.end().catch(() => undefined);
    },
  };
}
