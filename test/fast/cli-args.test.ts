// The command lines' shared argument parsing (core/infra/cli-args.ts): a negative number is a value, not
// an option, so the check that knows the option can say what is wrong with it; parse errors and bad
// numbers are one line naming the option. Then every CLI that takes a number, as a real process.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { intOption, isoInstantOption, joinNegativeValues, parseCliArgs, UsageError } from '../../core/infra/cli-args.ts';
import { runTs } from '../helpers/child.ts';
import { cleanupTmp, tmpDir } from '../helpers/tmp.ts';

test.after(cleanupTmp);

const options = { credits: { type: 'string' }, count: { type: 'string', short: 'c' }, dry: { type: 'boolean' } } as const;

test('a string option followed by a negative number takes it as its value; nothing else changes', () => {
  assert.equal(joinNegativeValues(['--credits', '-5', '-c', '-.5', '--count', '-0.25'], options), [
    '--credits=-5',
    '-c-.5',
    '--count=-0.25',
  ]);
  // A boolean option, an option with its value inline, a word starting with a dash, and anything after `--` stay as they are.
  assert.equal(joinNegativeValues(['--dry', '-5', '--credits=-1', '--credits', '-x', '--', '--credits', '-5'], options), [
    '--dry',
    '-5',
    '--credits=-1',
    '--credits',
    '-x',
    '--',
    '--credits',
    '-5',
  ]);
  assert.equal({ ...parseCliArgs({ args: ['--credits', '-5', '-c', '-3'], options }).values }, { credits: '-5', count: '-3' });
});

test("parseArgs' errors become one line naming the option", () => {
  const cases: Array<[string[], string]> = [
    [['--credits'], '--credits needs a value'],
    [['--credits', '--dry'], '--credits needs a value (one that starts with a dash is written --credits=-VALUE)'],
    [['--credits', '-x'], '--credits needs a value (one that starts with a dash is written --credits=-VALUE)'],
    [['--dry=yes'], '--dry takes no value'],
    [['--nope'], 'unknown option --nope (see --help)'],
    [['stray'], 'unexpected argument stray (see --help)'],
  ];
  for (const [args, message] of cases) {
    assert.throws(
      () => parseCliArgs({ args, options }),
      (err: Error) => err instanceof UsageError && err.message === message,
      `${args.join(' ')} -> ${message}`,
    );
  }
});

test('integer and date-time options: decimal digits in range, ISO 8601 only', () => {
  assert.is(intOption('posts', '20000', { min: 1 }), 20000);
  assert.is(intOption('posts', undefined, { min: 1 }, 7), 7);
  assert.is(intOption('trials', '0', { min: 0 }), 0);
  const refused: Array<[string | undefined, { min: number; max?: number }, string]> = [
    ['-5', { min: 1 }, '--n must be a positive whole number, got "-5"'],
    ['0', { min: 1 }, '--n must be a positive whole number, got "0"'],
    ['1.5', { min: 0 }, '--n must be a non-negative whole number, got "1.5"'],
    ['1e6', { min: 1 }, '--n must be a positive whole number, got "1e6"'],
    ['0x10', { min: 1 }, '--n must be a positive whole number, got "0x10"'],
    ['', { min: 1 }, '--n must be a positive whole number, got ""'],
    ['17', { min: 1, max: 16 }, '--n must be a whole number from 1 to 16, got "17"'],
    ['99999999999999999999', { min: 1 }, '--n must be a positive whole number, got "99999999999999999999"'],
    [undefined, { min: 1 }, '--n is required'],
  ];
  for (const [raw, range, message] of refused)
    assert.throws(
      () => intOption('n', raw, range),
      (err: Error) => err instanceof UsageError && err.message === message,
      message,
    );
  assert.is(isoInstantOption('as-of', '2026-10-01T00:00:00Z').toISOString(), '2026-10-01T00:00:00.000Z');
  assert.is(isoInstantOption('as-of', '2026-10-01').toISOString(), '2026-10-01T00:00:00.000Z');
  // `new Date` reads "-5" as the year 2001 and "1 May" as a date: neither is taken.
  for (const raw of ['-5', '1 May 2026', 'yesterday', '2026-13-01'])
    assert.throws(() => isoInstantOption('as-of', raw), /is not an ISO 8601 date-time/, raw);
});

test('every CLI that takes a number refuses a negative or malformed one in one line with exit code 2', async () => {
  const out = tmpDir();
  const cases: Array<[string, string[], RegExp]> = [
    ['fixtures/cli.ts', ['generate', '--posts', '-5', '--out', out], /^fixtures: --posts must be a positive whole number, got "-5"$/],
    ['fixtures/cli.ts', ['generate', '--posts=-5', '--out', out], /^fixtures: --posts must be a positive whole number, got "-5"$/],
    ['fixtures/cli.ts', ['generate', '--posts', '5', '--out', out, '--seed', '-1'], /^fixtures: --seed must be a whole number from 0 to/],
    [
      'fixtures/cli.ts',
      ['generate', '--posts', '5', '--out', out, '--bad-share', '-0.1'],
      /^fixtures: --bad-share must be a number from 0 to 0.5/,
    ],
    ['bench/cli.ts', ['ranking', '--posts', '-5'], /^bench: --posts must be a positive whole number, got "-5"$/],
    ['bench/cli.ts', ['ledger', '--crash-trials', 'x'], /^bench: --crash-trials must be a non-negative whole number, got "x"$/],
    ['bench/cli.ts', ['ranking', '--bogus'], /^bench: unknown option --bogus \(see --help\)$/],
    ['app/cluster.ts', ['--replicas', '-1'], /^cluster: --replicas must be a whole number from 1 to 16, got "-1"$/],
    ['pipeline/run/cli.ts', ['run', '--data-dir', out, '--as-of', '-5'], /^pipeline: --as-of "-5" is not an ISO 8601 date-time/],
  ];
  for (const [entry, args, says] of cases) {
    const r = await runTs(entry, args);
    const what = `${entry} ${args.join(' ')}`;
    assert.is(r.code, 2, `${what}: ${r.out}`);
    assert.match(r.out.trim(), says, what);
    assert.is(r.out.trim().split('\n').length, 1, `${what}: one line`);
  }
});

test.run();
