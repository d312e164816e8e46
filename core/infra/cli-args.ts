// The command lines' argument parsing (admin, pipeline, fixtures, bench, cluster, ui:shots): node:util's
// parseArgs with two changes. A string option's value may be a negative number as its own argument
// (`--credits -5`): parseArgs takes "-5" for an option and refuses it as "ambiguous", so the value
// never reaches the check that can say what is wrong with it ("credits must be positive"). And its
// errors become one line that names the option, for the CLIs' one-line messages.
import { parseArgs, type ParseArgsConfig } from 'node:util';

/** Bad command-line arguments: the message is one line written for the person typing them. */
export class UsageError extends Error {}

/** Starts like a negative number ("-5", "-0.5", "-.5"): no option's name starts with a digit or a dot. */
const NEGATIVE_NUMBER = /^-[\d.]/;

/**
 * `args` with each string option followed by a negative number joined to it (`--credits=-5`,
 * `-c-5`), the two spellings parseArgs reads as the option's value. Nothing after `--` changes.
 */
export function joinNegativeValues(args: readonly string[], options: NonNullable<ParseArgsConfig['options']>): string[] {
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === '--') {
      out.push(...args.slice(i));
      break;
    }
    const long = /^--([^=]+)$/.exec(arg)?.[1];
    const short = /^-([^-])$/.exec(arg)?.[1];
    const option = long !== undefined ? options[long] : Object.values(options).find((o) => short !== undefined && o.short === short);
    const next = args[i + 1];
    if (option?.type === 'string' && next !== undefined && NEGATIVE_NUMBER.test(next)) {
      out.push(long !== undefined ? `${arg}=${next}` : `${arg}${next}`);
      i++;
    } else out.push(arg);
  }
  return out;
}

/** parseArgs' message as one line that names the option and says what to do. */
function oneLine(err: Error & { code?: string }): string {
  const option = /Option '(?:-\w, )?(--?[^' <]+)/.exec(err.message)?.[1];
  switch (err.code) {
    case 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE':
      if (/ambiguous/.test(err.message)) return `${option} needs a value (one that starts with a dash is written ${option}=-VALUE)`;
      if (/argument missing/.test(err.message)) return `${option} needs a value`;
      if (/does not take an argument/.test(err.message)) return `${option} takes no value`;
      break;
    case 'ERR_PARSE_ARGS_UNKNOWN_OPTION':
      return `unknown option ${/'([^']+)'/.exec(err.message)?.[1]} (see --help)`;
    case 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL':
      return `unexpected argument ${/'([^']+)'/.exec(err.message)?.[1]} (see --help)`;
  }
  return err.message.split('\n')[0]!;
}

/** parseArgs over `config.args` (default: this process's arguments), negative values taken; throws UsageError. */
export function parseCliArgs<T extends ParseArgsConfig>(config: T): ReturnType<typeof parseArgs<T>> {
  const args = joinNegativeValues(config.args ?? process.argv.slice(2), config.options ?? {});
  try {
    return parseArgs<T>({ ...config, args });
  } catch (err) {
    throw new UsageError(oneLine(err as Error & { code?: string }));
  }
}

/**
 * An integer option's value: `raw` (undefined: `fallback`) must be a whole number in [min, max],
 * written in decimal digits ("1e6", "0x10" and "" are refused, not read as numbers).
 */
export function intOption(name: string, raw: string | undefined, range: { min: number; max?: number }, fallback?: number): number {
  if (raw === undefined) {
    if (fallback === undefined) throw new UsageError(`--${name} is required`);
    return fallback;
  }
  const n = /^[+-]?\d+$/.test(raw.trim()) ? Number(raw) : NaN;
  const max = range.max ?? Number.MAX_SAFE_INTEGER;
  const atLeast =
    range.min === 1
      ? 'a positive whole number'
      : range.min === 0
        ? 'a non-negative whole number'
        : `a whole number of at least ${range.min}`;
  const wanted = range.max === undefined ? atLeast : `a whole number from ${range.min} to ${range.max}`;
  if (!Number.isSafeInteger(n) || n < range.min || n > max) throw new UsageError(`--${name} must be ${wanted}, got "${raw}"`);
  return n;
}

/** ISO 8601: a date, or a date-time with an optional zone (what `new Date` also reads: "-5" and "May 1" are not). */
const ISO_8601 = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})?)?$/;

/** A date-time option's value: ISO 8601 only, since `new Date` also reads "-5" (as the year 2001). */
export function isoInstantOption(name: string, raw: string): Date {
  const at = ISO_8601.test(raw.trim()) ? new Date(raw.trim()) : new Date(NaN);
  if (Number.isNaN(at.getTime())) throw new UsageError(`--${name} "${raw}" is not an ISO 8601 date-time (e.g. 2026-10-01T00:00:00Z)`);
  return at;
}
