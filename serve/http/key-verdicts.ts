// Key verdicts kept for a database outage (docs/api.md, "During a database outage"): every request
// asks the ledger whether its key is valid, as before; the last "valid" answer for each key is
// kept here, by the SHA-256 of the secret (never the secret). Only when the ledger cannot be
// reached does a request fall back on it, and only if it is at most `maxAgeMs` old: free reads of
// the served snapshot go on for keys seen recently; a key revoked during the outage is refused
// again as soon as the database answers (the ledger is asked first, always). At most `capacity`
// keys are kept, the least recently seen dropped first.
import type { ApiKey } from '../../ledger/ledger-store.ts';

export class KeyVerdicts {
  private readonly byHash = new Map<string, { key: ApiKey; at: number }>();

  constructor(
    readonly maxAgeMs: number,
    private readonly capacity = 10_000,
  ) {}

  remember(hash: string, key: ApiKey, now = Date.now()): void {
    if (this.maxAgeMs <= 0) return;
    this.byHash.delete(hash);
    this.byHash.set(hash, { key, at: now });
    if (this.byHash.size > this.capacity) this.byHash.delete(this.byHash.keys().next().value!);
  }

  forget(hash: string): void {
    this.byHash.delete(hash);
  }

  /** The key last found valid for this hash, if that was at most maxAgeMs ago. */
  recall(hash: string, now = Date.now()): ApiKey | null {
    const v = this.byHash.get(hash);
    return v && now - v.at <= this.maxAgeMs ? v.key : null;
  }
}
