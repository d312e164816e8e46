// Bounded waits: shutting down waits for work in flight, and a search for its ranking, but never forever.

/** The value of `work`, or null when `ms` pass first (a rejection of `work` is passed on; the timer is cleared either way). */
export async function valueWithin<T>(work: Promise<T>, ms: number): Promise<T | null> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([work, new Promise<null>((resolve) => (timer = setTimeout(() => resolve(null), Math.max(0, ms))))]);
  } finally {
    clearTimeout(timer);
  }
}

/** Resolves when `work` settles or after `ms`, whichever comes first. */
export async function waitAtMost(work: Promise<unknown>, ms: number): Promise<void> {
  await valueWithin(
    work.then(
      () => undefined,
      () => undefined,
    ),
    ms,
  );
}

/** Poll `cond` every `everyMs` until it holds; throws naming `what` once `timeoutMs` pass first (never a bare sleep). */
export async function pollUntil(what: string, cond: () => boolean | Promise<boolean>, timeoutMs: number, everyMs = 20): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
