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
