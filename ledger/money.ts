// Money is integer micro-credits inside (1 credit = 1,000,000 micro); only the edges convert.
// Both units are branded numbers, so a credits figure passed where micro-credits are due (or the
// reverse) does not compile; this module is the one place that makes either. Parsing goes through
// the decimal string, never a float multiplication, so "0.1" is exactly 100,000 micro and 0.4
// credits always prints as 0.4.

/** Integer micro-credits: what the ledger stores and every in-memory amount holds. */
export type Micro = number & { readonly __unit: 'micro' };
/** Decimal credits: the API's unit (JSON bodies, headers, metrics), made only by `toCredits`. */
export type Credits = number & { readonly __unit: 'credits' };

const MICRO = 1_000_000;
/** Largest amount we accept anywhere: 1e9 credits, far below 2^53 micro. */
export const MAX_MICRO = (1_000_000_000 * MICRO) as Micro;
export const ZERO_MICRO = 0 as Micro;

class MoneyError extends Error {}

/** Credits (number or decimal string, at most 6 decimals) to micro-credits; a `Micro` is refused by the compiler. */
export function toMicro<T extends number | string>(credits: T extends Micro ? never : T): Micro {
  const text = typeof credits === 'number' ? credits.toString() : (credits as string).trim();
  if (!/^-?\d+(\.\d{1,6})?$/.test(text)) throw new MoneyError(`not an amount of credits with at most 6 decimals: ${text}`);
  const neg = text.startsWith('-');
  const [whole, frac = ''] = text.replace('-', '').split('.');
  const micro = Number(whole) * MICRO + Number(frac.padEnd(6, '0'));
  if (!Number.isSafeInteger(micro) || micro > MAX_MICRO) throw new MoneyError(`amount out of range: ${text}`);
  return (neg ? -micro : micro) as Micro;
}

/** Micro-credits to a JSON number of credits that prints exactly (0.4, never 0.39999999). */
export function toCredits(micro: Micro): Credits {
  // Division of an integer by 10^6 yields the nearest double to the decimal, which prints as it.
  return (micro / MICRO) as Credits;
}

/** A stored micro-credit figure (a ledger record, a database row, a job file) read back as one. */
export const asMicro = (n: number): Micro => n as Micro;

// Arithmetic on branded numbers gives plain numbers; these keep the unit.
export const addMicro = (a: Micro, b: Micro): Micro => (a + b) as Micro;
export const subMicro = (a: Micro, b: Micro): Micro => (a - b) as Micro;
/** A price per unit times a count of units. */
export const timesMicro = (each: Micro, count: number): Micro => (each * count) as Micro;

export function assertMicro(n: number, what: string): asserts n is Micro {
  if (!Number.isSafeInteger(n) || n < 0 || n > MAX_MICRO)
    throw new MoneyError(`${what} must be a non-negative integer amount of micro-credits`);
}
