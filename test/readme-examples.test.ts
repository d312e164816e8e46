// The README's examples, run as a new user runs them: a fresh `npm start` (the default corpus, the
// demo account), then the HTTP block of README.md in order with bash and curl, then the "Accounts,
// keys and credits" block with the server still running, then the request the start printed to
// try. Only the port differs (a free one instead of 8080). Any error answer, a failed job or a
// failing command fails the test.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ROOT, spawnNpm, waitFor } from './helpers/child.ts';
import { cleanupTmp, tmpDir } from './helpers/tmp.ts';

const run = promisify(execFile);
const README = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');

/** The ```sh block between two markers, or the first ```sh block after a heading. */
function block(after: string, until?: string): string {
  const from = README.indexOf(after);
  assert.ok(from >= 0, `README has ${after}`);
  const rest = README.slice(from, until ? README.indexOf(until, from) : undefined);
  const m = /```sh\n([^]*?)```/.exec(rest);
  assert.ok(m, `a sh block after ${after}`);
  return m![1]!;
}

/** Runs a block with bash: stop at the first failure; curl fails on an HTTP error (printing its body). */
async function bash(script: string, cwd: string, env: Record<string, string>): Promise<string> {
  const prelude = 'set -euo pipefail\ncurl() { command curl --fail-with-body --max-time 120 "$@"; }\n';
  try {
    const { stdout } = await run('bash', ['-c', prelude + script], { cwd, env: { ...process.env, ...env }, maxBuffer: 64 << 20 });
    return stdout;
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string; message: string };
    throw new Error(`${e.message}\nstdout (end): ${e.stdout?.slice(-1500)}\nstderr: ${e.stderr?.slice(-1500)}`);
  }
}

test.after(cleanupTmp);

test('every example of the README runs, in order, against a fresh npm start', async () => {
  const home = tmpDir('readme-');
  const dataDir = path.join(home, 'data');
  const server = spawnNpm('start', [], { DATA_DIR: dataDir, PORT: '0', PIPELINE_SCHEDULE: '{"run":"0 0 1 1 *"}' });
  try {
    await waitFor(() => /\n {2}stop: /.test(server.out()) || server.proc.exitCode !== null, 'npm start to serve', 540_000, 200);
    assert.is(server.proc.exitCode, null, server.out().slice(-2000));
    const baseUrl = /"baseUrl":"(http:\/\/[^"]+)"/.exec(server.out())![1]!;
    const origin = new URL(baseUrl).origin;
    const env = { DATA_DIR: dataDir };

    const http = block('<!-- readme-examples:start -->', '<!-- readme-examples:end -->').replaceAll('http://127.0.0.1:8080', origin);
    const out = await bash(`${http}\necho; echo "job status: $(curl -s -H "$K" "$B/intelligence/jobs/$JOB" | json .status)"\n`, home, env);
    assert.equal(/job status: (\w+)\s*$/.exec(out)?.[1], 'succeeded', 'the insights job of the README succeeds');

    // Accounts, keys and credits while the server runs (the CLI from the repository, as a user runs it).
    const admin = block('### Accounts, keys and credits');
    const adminOut = await bash(admin, ROOT, env);
    assert.match(adminOut, /"revokedAt": "\d{4}-/);

    // The request the start printed as the one to try.
    const tryLine = /try: +(curl [^\n]+)/.exec(server.out())![1]!;
    const tried = JSON.parse(await bash(tryLine, home, env)) as { items: unknown[] };
    assert.ok(tried.items.length > 0);
  } finally {
    server.stop();
    await server.exited;
  }
});

test.run();
