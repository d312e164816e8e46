// The loopback admin endpoint: how the admin CLI changes the ledger while the server holds it
// (one writer, always). Mounted by the server; answers only on a loopback address and only with
// `Authorization: Bearer <token>`, compared in constant time. Bodies are JSON.
//
// The token is ADMIN_TOKEN when the operator sets one. Without it the server makes a random token
// for its own lifetime and writes it into the announcement file, created with mode 0600 (as
// Jupyter's runtime files or Erlang's cookie do): whoever may read the ledger's directory, and so
// could edit the ledger anyway, can run the CLI; nobody else can. ADMIN_TOKEN itself never goes to disk.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { bodyParser } from '@koa/bodyparser';
import Router from '@koa/router';
import type Koa from 'koa';
import { writeFileAtomic } from '../../core/infra/durable-fs.ts';
import { nonJsonBodyRefusal } from '../../core/infra/json-body.ts';
import { AdminInputError, ADMIN_COMMANDS, runAdminCommand, type AdminCommand } from './admin-ops.ts';
import { LedgerError, type LedgerStore } from '../ledger-store.ts';

export const ADMIN_ENDPOINT_FILE = 'admin-endpoint.json';

const LOOPBACK = /^(127\.\d+\.\d+\.\d+|::1|::ffff:127\.\d+\.\d+\.\d+)$/;
const digest = (s: string) => createHash('sha256').update(s).digest();

export function isLoopback(ip: string): boolean {
  return LOOPBACK.test(ip);
}

/** Does an Authorization header carry `Bearer <token>`? Compared in constant time (digests of equal length). */
export function bearerMatches(authorization: string, token: string): boolean {
  const given = /^Bearer (.+)$/.exec(authorization)?.[1] ?? '';
  return timingSafeEqual(digest(given), digest(token));
}

/** What the server announces in DATA_DIR/ledger/admin-endpoint.json. */
export interface AdminAnnouncement {
  /** The admin base: POST `${url}/<command>`, e.g. http://127.0.0.1:8080/api/admin/credits.topup. */
  url: string;
  pid: number;
  /** Present only when the server made its own token (no ADMIN_TOKEN set). */
  token?: string;
}

/** The endpoint's token: ADMIN_TOKEN, or a fresh random one for this server's lifetime. */
export function adminToken(configured: string | undefined): { token: string; generated: boolean } {
  return configured ? { token: configured, generated: false } : { token: `adm_${randomBytes(24).toString('base64url')}`, generated: true };
}

/** POST {prefix}/admin/<command> with the command's JSON input, e.g. /api/admin/credits.topup. */
export function createAdminRouter(ledger: LedgerStore, token: string | undefined, prefix = ''): Router {
  const router = new Router({ prefix: `${prefix}/admin` });
  router.use(async (ctx: Koa.Context, next: Koa.Next) => {
    if (!isLoopback(ctx.socket.remoteAddress ?? '')) {
      ctx.status = 404;
      ctx.body = { error: 'not found' };
      return;
    }
    if (!token || !bearerMatches(ctx.get('authorization'), token)) {
      ctx.status = 401;
      ctx.body = {
        error: token ? 'admin token required (Authorization: Bearer <ADMIN_TOKEN>)' : 'admin endpoint disabled: ADMIN_TOKEN is not set',
      };
      return;
    }
    await next();
  });
  router.use(async (ctx, next) => {
    const refusal = nonJsonBodyRefusal(ctx.req, () => Boolean(ctx.request.is('application/json')));
    if (refusal !== null) ctx.throw(415, refusal);
    await next();
  });
  router.use(bodyParser({ enableTypes: ['json'], jsonLimit: '16kb', onError: (_e, ctx) => ctx.throw(400, 'body is not valid JSON') }));
  router.post('/:command', async (ctx) => {
    const command = ctx.params.command as AdminCommand;
    if (!ADMIN_COMMANDS.includes(command)) {
      ctx.status = 404;
      ctx.body = { error: `unknown admin command ${ctx.params.command} (commands: ${ADMIN_COMMANDS.join(', ')})` };
      return;
    }
    try {
      ctx.body = await runAdminCommand(ledger, command, ctx.request.body);
    } catch (err) {
      if (err instanceof AdminInputError) ctx.status = 400;
      else if (err instanceof LedgerError) ctx.status = err.code === 'not_found' ? 404 : 400;
      else throw err;
      ctx.body = { error: (err as Error).message };
    }
  });
  return router;
}

/**
 * The server announces its admin endpoint (the admin base URL, `{base_url}/admin`) so the CLI knows
 * to go through it; a token it made itself goes in the same owner-only file.
 */
export async function announceAdminEndpoint(ledgerDir: string, url: string, generatedToken?: string): Promise<() => Promise<void>> {
  const file = path.join(ledgerDir, ADMIN_ENDPOINT_FILE);
  const announcement: AdminAnnouncement = { url, pid: process.pid, ...(generatedToken ? { token: generatedToken } : {}) };
  await writeFileAtomic(file, JSON.stringify(announcement) + '\n', 0o600);
  return () => fs.rm(file, { force: true });
}
