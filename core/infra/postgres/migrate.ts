// Versioned schema migrations: the NNN_name.sql files of a folder, applied in order, each in its
// own transaction with its version recorded in <schema>.schema_migrations. Concurrent starters
// (several replicas at once) serialise on the setup lock (setup-lock.ts), so each file runs exactly once.
import fs from 'node:fs';
import path from 'node:path';
import type { PgPool } from './pool.ts';
import { withSetupLock } from './setup-lock.ts';

interface Migration {
  version: number;
  name: string;
  sql: string;
}

function readMigrations(dir: string): Migration[] {
  return fs
    .readdirSync(dir)
    .filter((f) => /^\d{3}_[\w-]+\.sql$/.test(f))
    .sort()
    .map((f) => ({ version: Number(f.slice(0, 3)), name: f.slice(4, -4), sql: fs.readFileSync(path.join(dir, f), 'utf8') }));
}

/** Apply what is missing; returns the versions applied now. */
export async function migrate(pool: PgPool, schema: string, dir: string): Promise<number[]> {
  if (!/^[a-z_][a-z0-9_]*$/.test(schema)) throw new Error(`not a schema name: ${schema}`);
  return withSetupLock(pool, async (client) => {
    await client.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`);
    await client.query(
      `CREATE TABLE IF NOT EXISTS ${schema}.schema_migrations
         (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`,
    );
    const done = new Set(
      (await client.query<{ version: number }>(`SELECT version FROM ${schema}.schema_migrations`)).rows.map((r) => r.version),
    );
    const applied: number[] = [];
    for (const m of readMigrations(dir)) {
      if (done.has(m.version)) continue;
      await client.query('BEGIN');
      try {
        await client.query(m.sql);
        await client.query(`INSERT INTO ${schema}.schema_migrations (version, name) VALUES ($1, $2)`, [m.version, m.name]);
        await client.query('COMMIT');
      } catch (err) {
        await client.query('ROLLBACK');
        throw new Error(`migration ${schema} ${m.version}_${m.name} failed: ${(err as Error).message}`);
      }
      applied.push(m.version);
    }
    return applied;
  });
}
