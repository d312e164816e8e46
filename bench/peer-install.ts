// Third-party peers the benchmarks measure (LanceDB) live in their own package, bench/peers/, so
// they are never dependencies of the product. The bench installs it on demand, from its committed
// lockfile, and runs each peer as a child process with its own node_modules.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

export const PEERS_DIR = path.join(import.meta.dirname, 'peers');

/**
 * Install bench/peers when `module` (e.g. '@lancedb/lancedb') is missing from its node_modules:
 * `npm ci` from the committed lockfile (`npm install` when there is none). Install scripts are
 * off: LanceDB ships prebuilt binaries as per-platform optional packages and needs none, while its
 * optional embedding extras (@huggingface/transformers -> onnxruntime-node) would try to download
 * binaries from outside the npm registry.
 */
export function ensurePeerInstalled(module: string): void {
  const installed = () => fs.existsSync(path.join(PEERS_DIR, 'node_modules', module, 'package.json'));
  if (installed()) return;
  const rel = path.relative(process.cwd(), PEERS_DIR) || '.';
  const npm = (args: string[]) => {
    process.stderr.write(`bench: running: npm ${args.join(' ')}\n`);
    const r = spawnSync(process.platform === 'win32' ? 'npm.cmd' : 'npm', args, { stdio: ['ignore', 2, 2] });
    return r.error ? r.error.message : r.status === 0 ? null : `exit ${r.status}`;
  };
  const common = ['--prefix', rel, '--ignore-scripts', '--no-audit', '--no-fund'];
  process.stderr.write(`bench: ${module} is not installed in ${rel}/node_modules; installing the bench peers\n`);
  let failed: string | null;
  if (fs.existsSync(path.join(PEERS_DIR, 'package-lock.json'))) {
    failed = npm(['ci', ...common]);
    if (failed) {
      // npm ci refuses a lockfile that lacks entries for optional packages the registry could not
      // serve when the lockfile was made (LanceDB's other-platform binaries, when it was made
      // against a registry mirror without them). npm install --no-save installs the locked versions
      // all the same and leaves the committed lockfile alone.
      process.stderr.write(
        `bench: npm ci failed (${failed}); falling back to npm install --no-save (the lockfile's versions, lockfile untouched)\n`,
      );
      failed = npm(['install', '--no-save', ...common]);
    }
  } else {
    failed = npm(['install', ...common]);
  }
  if (failed) throw new Error(`bench: installing ${rel} failed (${failed}); the peer cannot run`);
  if (!installed()) throw new Error(`bench: npm finished but ${module} is still missing from ${rel}/node_modules`);
}

/** Run a peer script of bench/peers with this Node; its stdout and stderr go to our stderr. */
export function runPeerScript(script: string, args: string[], env: Record<string, string> = {}): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(PEERS_DIR, script), ...args], {
      stdio: ['ignore', 2, 2],
      env: { ...process.env, ...env },
    });
    child.on('error', reject);
    child.on('exit', (code, signal) =>
      code === 0 ? resolve() : reject(new Error(`bench: peer ${script} failed (${signal ?? `exit ${code}`})`)),
    );
  });
}
