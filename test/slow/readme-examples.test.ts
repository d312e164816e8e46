// The README's examples, run as a new user runs them: a fresh `npm start` (the default corpus, the
// demo account), then the HTTP block of README.md in order with bash and curl, five times on the
// demo account's credits (each pass's cost measured), then the "Accounts, keys and credits" block
// with the server still running, then the request the start printed to try. Only the port differs
// (a free one instead of 8080). Any error answer, a failed job or a failing command fails the test.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { DEFAULT_DEMO_CREDITS } from '../../core/infra/config.ts';
import { pollUntil } from '../../core/infra/wait-at-most.ts';
import { ROOT, spawnNpm } from '../helpers/child.ts';
import { cleanupTmp, tmpDir } from '../helpers/tmp.ts';

const run = promisify(execFile);
const README = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
/** The README promises its examples run several times on the demo credits: this many, in a row. */
const PASSES = 5;

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
    await pollUntil('npm start to serve', () => /\n {2}stop: /.test(server.out()) || server.proc.exitCode !== null, 540_000, 200);
    assert.is(server.proc.exitCode, null, server.out().slice(-2000));
    const baseUrl = /"baseUrl":"(http:\/\/[^"]+)"/.exec(server.out())![1]!;
    const origin = new URL(baseUrl).origin;
    const env = { DATA_DIR: dataDir };

    // The HTTP block, PASSES times on the demo account's first grant: what each pass costs, measured.
    const http = block('<!-- readme-examples:start -->', '<!-- readme-examples:end -->').replaceAll('http://127.0.0.1:8080', origin);
    const secret = (JSON.parse(fs.readFileSync(path.join(dataDir, 'demo-key.json'), 'utf8')) as { secret: string }).secret;
    const usage = async () =>
      (await (await fetch(`${baseUrl}/usage?limit=50`, { headers: { 'x-api-key': secret } })).json()) as {
        balance: number;
        entries: Array<{ what: string; held: number | null; charged: number | null }>;
      };
    const grant = (await usage()).balance;
    assert.is(grant, DEFAULT_DEMO_CREDITS, 'the demo account starts with DEMO_CREDITS');
    const costs: number[] = [];
    let holds = 0;
    for (let pass = 1; pass <= PASSES; pass++) {
      const before = (await usage()).balance;
      const out = await bash(
        `${http}\necho; echo "job status: $(curl -s -H "$K" "$B/intelligence/jobs/$JOB" | json .status)"\n`,
        home,
        env,
      );
      assert.equal(/job status: (\w+)\s*$/.exec(out)?.[1], 'succeeded', `pass ${pass}: the insights job of the README succeeds`);
      const after = await usage();
      costs.push(Math.round((before - after.balance) * 1e6) / 1e6);
      if (pass === 1) holds = after.entries.reduce((sum, e) => sum + (e.held ?? 0), 0);
      if (pass === 1)
        process.stdout.write(
          `README examples, pass 1: ${after.entries
            .filter((e) => e.held !== null)
            .map((e) => `${e.what} held ${e.held} charged ${e.charged}`)
            .join('; ')}\n`,
        );
    }
    process.stdout.write(`README examples: ${PASSES} passes on the demo grant of ${grant} credits cost ${costs.join(', ')}\n`);
    // Later passes find the insights job in the hour's cache and hold nothing for it: the grant must
    // also cover the passes an hour apart, each placing every hold of the first (the job's 46) again.
    assert.ok(
      grant - (PASSES - 1) * Math.max(...costs) >= holds,
      `the demo grant of ${grant} covers ${PASSES} passes without the cache (costs ${costs.join(', ')}, holds ${holds})`,
    );

    // Accounts, keys and credits while the server runs (the CLI from the repository, as a user runs it).
    const admin = block('### Accounts, keys and credits').replaceAll('http://127.0.0.1:8080', origin);
    const adminOut = await bash(admin, ROOT, env);
    assert.match(adminOut, /"revokedAt": "\d{4}-/);
    // The new key's answer, its secret with it, kept where the block says, readable by its owner only.
    const keyFile = path.join(dataDir, 'ci-key.json');
    assert.is((fs.statSync(keyFile).mode & 0o777).toString(8), '600');
    assert.match((JSON.parse(fs.readFileSync(keyFile, 'utf8')) as { secret: string }).secret, /^sk_/);

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
