// Money is integer micro-credits inside (1 credit = 1,000,000 micro); only the edges convert.
// Parsing goes through the decimal string, never a float multiplication, so "0.1" is exactly
// 100,000 micro and 0.4 credits always prints as 0.4.

export const MICRO = 1_000_000;
/** Largest amount we accept anywhere: 1e9 credits, far below 2^53 micro. */
export const MAX_MICRO = 1_000_000_000 * MICRO;

export class MoneyError extends Error {}

/** Credits (number or decimal string, at most 6 decimals) to micro-credits. */
export function toMicro(credits: number | string): number {
  const text = typeof credits === 'number' ? credits.toString() : credits.trim();
  if (!/^-?\d+(\.\d{1,6})?$/.test(text)) throw new MoneyError(`not an amount of credits with at most 6 decimals: ${text}`);
  const neg = text.startsWith('-');
  const [whole, frac = ''] = text.replace('-', '').split('.');
  const micro = Number(whole) * MICRO + Number(frac.padEnd(6, '0'));
  if (!Number.isSafeInteger(micro) || micro > MAX_MICRO) throw new MoneyError(`amount out of range: ${text}`);
  return neg ? -micro : micro;
}

/** Micro-credits to a JSON number of credits that prints exactly (0.4, never 0.39999999). */
export function toCredits(micro: number): number {
  // Division of an integer by 10^6 yields the nearest double to the decimal, which prints as it.
  return micro / MICRO;
}

export function assertMicro(n: number, what: string): void {
  if (!Number.isSafeInteger(n) || n < 0 || n > MAX_MICRO)
    throw new MoneyError(`${what} must be a non-negative integer amount of micro-credits`);
}
