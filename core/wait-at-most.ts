// A bounded wait: shutting down waits for work in flight, but never forever.

/** Resolves when `work` settles or after `ms`, whichever comes first (the timer is cleared either way). */
export async function waitAtMost(work: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([work.then(() => undefined, () => undefined), new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)))]);
  } finally {
    clearTimeout(timer);
  }
}
