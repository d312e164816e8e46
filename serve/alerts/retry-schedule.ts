// When a failed delivery is tried again (docs/api.md, "Webhook deliveries"): every non-2xx answer,
// timeout, refused or reset connection is retried, the waits doubling from ALERTS_RETRY_BASE_MS
// (at most an hour), each drawn between half and all of its length so the events of one outage
// do not all come back at the same instant; until ALERTS_RETRY_WINDOW_MS after the event was
// made (or redelivered, or its watch resumed): its retry span ("span", not "window": a window
// here is a time window of the maps, 7d, 30d...). Past that the event gives up.

export const MAX_WAIT_MS = 3_600_000;

export interface RetrySettings {
  baseMs: number;
  /** ALERTS_RETRY_WINDOW_MS: how long after its span's start an event is still retried. */
  spanMs: number;
}

/** The wait before retry `n` (1 = the first retry): base * 2^(n-1), capped, jittered to [half, all]. */
export function retryWait(n: number, baseMs: number, random: () => number = Math.random): number {
  const full = Math.min(MAX_WAIT_MS, baseMs * 2 ** Math.min(n - 1, 40));
  return Math.round(full / 2 + random() * (full / 2));
}

/** When to try again after the `spanAttempts`-th failed attempt of this span, or null: the span is used up. */
export function nextAttemptAt(now: Date, spanStart: Date, spanAttempts: number, s: RetrySettings, random?: () => number): Date | null {
  const at = now.getTime() + retryWait(spanAttempts, s.baseMs, random);
  return at > spanStart.getTime() + s.spanMs ? null : new Date(at);
}
