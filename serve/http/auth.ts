// Authentication (docs/api.md, "Conventions"): every request carries `x-api-key`; the key is looked up by the SHA-256
// of the secret (only hashes are stored) and must not be revoked. Missing, unknown or revoked:
// 403 with a JSON error, before any work. The secret itself is never logged or echoed. When the
// ledger cannot be reached, a key found valid recently (key-verdicts.ts) is taken at its word,
// the caller marked `degraded`: billed calls then meet the ledger's outage (a 503) themselves.
import type Koa from 'koa';
import { isConnectionLoss } from '../../core/infra/postgres/connection-loss.ts';
import { hashSecret, type ApiKey, type LedgerStore } from '../../ledger/ledger-store.ts';
import { valueWithin } from '../../core/infra/wait-at-most.ts';
import { HttpError } from './http-error.ts';
import type { KeyVerdicts } from './key-verdicts.ts';

/** How long a key check waits for the ledger before it is taken for out of reach (as /readyz waits). */
const KEY_CHECK_WAIT_MS = 2_000;

export interface Caller {
  key: ApiKey;
  account: string;
  /** Verified from a kept verdict: the ledger is out of reach. */
  degraded?: boolean;
}

export async function authenticate(ledger: LedgerStore, header: string | undefined, verdicts?: KeyVerdicts): Promise<Caller> {
  const secret = header?.trim();
  if (!secret) throw new HttpError(403, { error: 'missing x-api-key header' });
  const hash = hashSecret(secret);
  let key: ApiKey | null;
  try {
    const answer = await valueWithin(
      ledger.keyByHash(hash).then((k) => ({ k })),
      KEY_CHECK_WAIT_MS,
    );
    // A database that hangs (stopped, a network that drops packets) is out of reach as much as one that refuses.
    if (!answer) throw Object.assign(new Error(`the key check got no answer within ${KEY_CHECK_WAIT_MS} ms`), { code: 'ETIMEDOUT' });
    key = answer.k;
  } catch (err) {
    const kept = isConnectionLoss(err) ? verdicts?.recall(hash) : null;
    if (!kept) throw err;
    return { key: kept, account: kept.account, degraded: true };
  }
  if (!key || key.revokedAt) {
    verdicts?.forget(hash);
    throw new HttpError(403, { error: key ? 'this API key has been revoked' : 'invalid API key' });
  }
  verdicts?.remember(hash, key);
  return { key, account: key.account };
}

/** Koa middleware: sets ctx.state.caller or answers 403. */
export function requireKey(ledger: LedgerStore, verdicts?: KeyVerdicts): Koa.Middleware {
  return async (ctx, next) => {
    ctx.state.caller = await authenticate(ledger, ctx.get('x-api-key') || undefined, verdicts);
    await next();
  };
}
