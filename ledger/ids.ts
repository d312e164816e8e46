// Record ids (acc_, key_, hld_, top_ + 16 base64url characters: 96 random bits).
import { randomBytes } from 'node:crypto';

// Ids come from a pooled random buffer: randomBytes() per id was a sixth of the hot path.
let pool = randomBytes(0);
let poolAt = 0;
export function newId(prefix: string): string {
  if (poolAt + 12 > pool.length) {
    pool = randomBytes(12 * 1024);
    poolAt = 0;
  }
  poolAt += 12;
  return `${prefix}_${pool.toString('base64url', poolAt - 12, poolAt)}`;
}

/** An API key's secret, shown once; only its SHA-256 is stored (ledger-store.ts, hashSecret). */
export const newSecret = () => `sk_${randomBytes(24).toString('base64url')}`;
