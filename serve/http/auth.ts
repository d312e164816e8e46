// Authentication (docs/api.md, "Conventions"): every request carries `x-api-key`; the key is looked up by the SHA-256
// of the secret (only hashes are stored) and must not be revoked. Missing, unknown or revoked:
// 403 with a JSON error, before any work. The secret itself is never logged or echoed.
import type Koa from 'koa';
import type { ApiKey, LedgerStore } from '../../ledger/ledger-store.ts';
import { HttpError } from './http-error.ts';

export interface Caller {
  key: ApiKey;
  account: string;
}

export async function authenticate(ledger: LedgerStore, header: string | undefined): Promise<Caller> {
  const secret = header?.trim();
  if (!secret) throw new HttpError(403, { error: 'missing x-api-key header' });
  const key = await ledger.keyBySecret(secret);
  if (!key) throw new HttpError(403, { error: 'invalid API key' });
  if (key.revokedAt) throw new HttpError(403, { error: 'this API key has been revoked' });
  return { key, account: key.account };
}

/** Koa middleware: sets ctx.state.caller or answers 403. */
export function requireKey(ledger: LedgerStore): Koa.Middleware {
  return async (ctx, next) => {
    ctx.state.caller = await authenticate(ledger, ctx.get('x-api-key') || undefined);
    await next();
  };
}
