// The Idempotency-Key header (docs/api.md, "POST /search") as POST /search and job submits read it.
import { createHash } from 'node:crypto';
import type Koa from 'koa';
import { z } from 'zod';
import { badRequest } from './http-error.ts';

/** 1 to 255 visible ASCII characters: the header's rule, and the MCP tools' idempotencyKey argument. */
const IDEMPOTENCY_KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;
const IDEMPOTENCY_KEY_RULE = 'Idempotency-Key must be 1 to 255 visible ASCII characters';
export const idempotencyKeySchema = z.string().regex(IDEMPOTENCY_KEY_PATTERN, IDEMPOTENCY_KEY_RULE);

/** What "the same body" means for a key: the SHA-256 of the request as validated (spacing and key order do not count). */
export function requestHash(validated: unknown): string {
  return createHash('sha256').update(JSON.stringify(validated)).digest('hex');
}

/** The request's key, null without one; a malformed key is a 400. */
export function idempotencyKeyHeader(ctx: Koa.Context): string | null {
  const key = ctx.get('idempotency-key') || null;
  if (key !== null && !idempotencyKeySchema.safeParse(key).success) throw badRequest(IDEMPOTENCY_KEY_RULE);
  return key;
}
