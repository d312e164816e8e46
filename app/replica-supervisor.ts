// The replicas of `npm run cluster` (app/cluster.ts): each a serve/main.ts process, started and,
// whenever it dies or fails to start, started again for as long as the cluster runs, waiting
// longer after each failure in a row (1 s, 2 s, 4 s ... at most 30 s; a replica that ran a minute
// starts over at 1 s), as a process supervisor does (systemd's Restart=always with a growing
// RestartSec, Kubernetes' CrashLoopBackOff): a replica that cannot start while PostgreSQL is away
// is tried again until it can, without a busy loop, and the other replicas serve meanwhile.
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { backoffDelay } from '../core/infra/backoff.ts';
import type { Logger } from '../core/infra/log.ts';

const ROOT = path.resolve(import.meta.dirname, '..');
const FIRST_DELAY_MS = 1_000;
const MAX_DELAY_MS = 30_000;
/** A replica that ran this long before it died is not failing in a row: its next start waits FIRST_DELAY_MS. */
const STABLE_MS = 60_000;

export interface Replica {
  index: number;
  /** The port asked for (0: any free one) and the one it listens on once it does. */
  port: number;
  listening: number | null;
  proc: ChildProcess | null;
}

/**
 * One start: resolves once it listens, with its exit (wrapped: a promise resolved with a promise
 * would wait for it); rejects when it exits before it listens.
 */
function startOnce(r: Replica, env: NodeJS.ProcessEnv, onLine: (line: string) => void): Promise<{ exited: Promise<string> }> {
  // Its own process group: a Ctrl-C reaches the cluster, which stops the replicas in order.
  const proc = spawn(process.execPath, ['--max-semi-space-size=32', '--import', 'tsx', path.join(ROOT, 'serve', 'main.ts')], {
    cwd: ROOT,
    env: { ...env, PORT: String(r.port) },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  r.proc = proc;
  const exited = new Promise<string>((resolve) => proc.once('exit', (code, signal) => resolve(signal ?? `exit ${code}`)));
  return new Promise((resolve, reject) => {
    const each = (d: Buffer) => {
      for (const line of d.toString('utf8').split('\n')) {
        if (!line) continue;
        onLine(line);
        // The start notice's first line (printed whatever LOG_LEVEL says).
        const m = r.listening === null ? /^Serving http:\/\/[^\s/]+:(\d+)/.exec(line) : null;
        if (m) ((r.listening = Number(m[1])), resolve({ exited }));
      }
    };
    proc.stdout!.on('data', each);
    proc.stderr!.on('data', each);
    void exited.then((how) => reject(new Error(`replica ${r.index} exited before it listened (${how})`)));
  });
}

/**
 * Keep replica `r` running until `stopping()`: resolves once it first listens (it may take several
 * starts); every later death or failed start is logged and followed by a start after restartDelay.
 */
export function superviseReplica(
  r: Replica,
  env: NodeJS.ProcessEnv,
  log: Logger,
  stopping: () => boolean,
  onLine: (line: string) => void,
): Promise<void> {
  let listened!: () => void;
  const first = new Promise<void>((resolve) => (listened = resolve));
  void (async () => {
    let failures = 0;
    while (!stopping()) {
      const startedAt = Date.now();
      r.listening = null;
      let why: string;
      try {
        const { exited } = await startOnce(r, env, onLine);
        listened();
        why = `died (${await exited})`;
        if (Date.now() - startedAt >= STABLE_MS) failures = 0;
      } catch (err) {
        why = `did not start: ${(err as Error).message}`;
      }
      if (stopping()) return;
      const wait = backoffDelay(++failures, FIRST_DELAY_MS, MAX_DELAY_MS);
      log.error({ replica: r.index, failures, retryInMs: wait }, `replica ${why}; starting it again in ${wait / 1000} s`);
      await new Promise((resolve) => setTimeout(resolve, wait));
    }
  })();
  return first;
}
