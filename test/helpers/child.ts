// Child processes for CLI and crash tests: spawn a TypeScript entry point under tsx and collect its
// output (tests wait on it with core/infra/wait-at-most.ts's pollUntil: a bounded poll, never a bare sleep).
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';

export const ROOT = path.resolve(import.meta.dirname, '..', '..');

export interface Child {
  proc: ChildProcess;
  out(): string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

export function spawnTs(entry: string, args: string[], env: Record<string, string> = {}): Child {
  const proc = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, entry), ...args], {
    cwd: ROOT,
    env: { ...process.env, NO_COLOR: '1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let buf = '';
  proc.stdout!.on('data', (d) => (buf += d));
  proc.stderr!.on('data', (d) => (buf += d));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    proc.on('close', (code, signal) => resolve({ code, signal })),
  );
  return { proc, out: () => buf, exited };
}

/**
 * `npm run <script> -- args` as a user types it, in its own process group so a stop reaches npm's
 * child too (stop() sends the signal to the group).
 */
export function spawnNpm(
  script: string,
  args: string[],
  env: Record<string, string> = {},
): Child & { stop(signal?: NodeJS.Signals): void } {
  const proc = spawn('npm', ['run', '--silent', script, ...(args.length ? ['--', ...args] : [])], {
    cwd: ROOT,
    env: { ...process.env, NO_COLOR: '1', npm_config_update_notifier: 'false', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let buf = '';
  proc.stdout!.on('data', (d) => (buf += d));
  proc.stderr!.on('data', (d) => (buf += d));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    proc.on('close', (code, signal) => resolve({ code, signal })),
  );
  const stop = (signal: NodeJS.Signals = 'SIGTERM') => {
    try {
      process.kill(-proc.pid!, signal);
    } catch {
      // already gone
    }
  };
  return { proc, out: () => buf, exited, stop };
}

export async function runNpm(
  script: string,
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number | null; out: string }> {
  const c = spawnNpm(script, args, env);
  const { code } = await c.exited;
  return { code, out: c.out() };
}

export async function runTs(
  entry: string,
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number | null; out: string }> {
  const c = spawnTs(entry, args, env);
  const { code } = await c.exited;
  return { code, out: c.out() };
}
