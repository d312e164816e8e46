// Preconditions stated and checked, TigerBeetle style: code that relies on lengths matching, a
// range, or an order asserts it, so a broken assumption stops at the line that made it instead of
// turning into a silent wrong answer several calls later. Always on (they are cheap next to the
// work they guard; none sits inside an inner loop). A failed assertion is a bug, never bad input:
// input is validated where it enters (the HTTP schemas, ingest) with errors made for the caller.

export class AssertionFailed extends Error {
  override name = 'AssertionFailed';
}

/** `cond` must hold; `what` says what was expected (built only when it fails). */
export function assert(cond: unknown, what: string | (() => string)): asserts cond {
  if (!cond) throw new AssertionFailed(typeof what === 'function' ? what() : what);
}

/** An integer in [min, max]. */
export function assertInt(x: number, min: number, max: number, name: string): void {
  if (!(Number.isInteger(x) && x >= min && x <= max)) throw new AssertionFailed(`${name} = ${x}, expected an integer in [${min}, ${max}]`);
}

/** Two lengths that must agree (`a` of one thing, `b` of another). */
export function assertSameLength(a: number, b: number, what: string): void {
  if (a !== b) throw new AssertionFailed(`${what}: ${a} against ${b}`);
}

/** `xs` ascending (non-decreasing), as a binary search over it needs. */
export function assertSorted(xs: ArrayLike<number>, what: string): void {
  for (let i = 1; i < xs.length; i++)
    if (xs[i]! < xs[i - 1]!) throw new AssertionFailed(`${what}: not in ascending order at ${i} (${xs[i - 1]} then ${xs[i]})`);
}
