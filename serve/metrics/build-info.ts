// ci_build_info: which build is serving (package.json's version, the git commit), so a dashboard
// can mark a deploy and tell replicas apart. The commit is BUILD_COMMIT when the image sets it,
// else read from the checkout once at start; "unknown" when neither says.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Gauge, type Registry } from 'prom-client';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

function buildLabels(): { version: string; commit: string } {
  let version = 'unknown';
  try {
    version = (JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version?: string }).version ?? version;
  } catch {
    // no package.json beside the code: the version stays unknown
  }
  let commit = process.env.BUILD_COMMIT ?? '';
  if (!commit)
    try {
      commit = execFileSync('git', ['rev-parse', '--short=12', 'HEAD'], { cwd: ROOT, stdio: ['ignore', 'pipe', 'ignore'] })
        .toString()
        .trim();
    } catch {
      commit = 'unknown';
    }
  return { version, commit };
}

export function buildInfo(registry: Registry): void {
  const g = new Gauge({
    name: 'ci_build_info',
    help: 'The build serving (value 1): version and commit labels',
    labelNames: ['version', 'commit'] as const,
    registers: [registry],
  });
  g.set(buildLabels(), 1);
}
