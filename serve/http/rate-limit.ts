// Per-key rate limit: a token bucket (RATE_LIMIT_RPS tokens a second, bursts of RATE_LIMIT_BURST),
// refilled lazily on each request. Over the limit: 429 with Retry-After (whole seconds until a
// token is back). In memory, per process: the limit protects this server, not a global quota.
import { HttpError } from './http-error.ts';

interface Bucket {
  tokens: number;
  at: number;
}

export class RateLimiter {
  private buckets = new Map<string, Bucket>();

  constructor(
    readonly perSecond: number,
    readonly burst: number,
    private readonly now = () => performance.now(),
  ) {}

  /** Take one token for `key` or throw a 429. */
  take(key: string): void {
    const t = this.now();
    const b = this.buckets.get(key) ?? { tokens: this.burst, at: t };
    b.tokens = Math.min(this.burst, b.tokens + ((t - b.at) / 1000) * this.perSecond);
    b.at = t;
    if (b.tokens < 1) {
      this.buckets.set(key, b);
      const wait = Math.max(1, Math.ceil((1 - b.tokens) / this.perSecond));
      throw new HttpError(
        429,
        { error: `rate limit exceeded: ${this.perSecond} requests per second per key (bursts of ${this.burst}); retry after ${wait} s` },
        { 'Retry-After': String(wait) },
      );
    }
    b.tokens -= 1;
    this.buckets.set(key, b);
  }
}
