// Free reads of the caller's own account (docs/api.md, "Free reads"): GET /usage (the credit ledger newest first,
// opaque cursor, limit, keyId filter) and GET /health (status, the generation served and how old
// its data is, the ledger's state). Never billed, never in the usage ledger.
import Router from '@koa/router';
import type { ApiState } from '../generation/api-state.ts';
import { LedgerError, type LedgerStore } from '../../ledger/ledger-store.ts';
import { toCredits } from '../../ledger/money.ts';
import { badRequest, HttpError } from '../http/http-error.ts';
import { queryFrom } from '../http/query.ts';
import { isConnectionLoss } from '../../core/infra/postgres/connection-loss.ts';
import { usageQuery } from './account-queries.ts';
import type { SnapshotStore } from '../generation/snapshot-store.ts';
import type { AnswerCache } from '../search/answer-cache.ts';
import type { SearchPool } from '../search/search-pool.ts';
import type { SwapWarmUp } from '../search/swap-warm-up.ts';

/** What /health says of where searches run (the workers, the answer cache, the last swap's warm-up) and of the free reads' cache. */
interface SearchParts {
  pool: SearchPool | null;
  cache: AnswerCache | null;
  warmUp?: SwapWarmUp | null;
  /** The free map reads' cache (serve/maps/read-cache.ts), as its figures. */
  reads?: { entries: number; bytes: number; hits: number; misses: number } | null;
}

export function accountRouter(
  ledger: LedgerStore,
  snapshots: SnapshotStore,
  startedAt: Date,
  search: SearchParts = { pool: null, cache: null },
): Router {
  const warmUpOf = (w: NonNullable<SwapWarmUp['last']> | null) =>
    w && { generation: w.generation, searches: w.searches, of: w.of, failed: w.failed, ms: w.ms };
  const r = new Router<ApiState>();
  r.get('/usage', async (ctx) => {
    const caller = ctx.state.caller;
    const { limit, cursor = null, keyId = null } = queryFrom(usageQuery, ctx.query);
    try {
      const page = await ledger.usage(caller.account, { cursor, limit, keyId });
      const b = await ledger.balance(caller.account);
      ctx.body = {
        account: caller.account,
        balance: toCredits(b.balanceMicro),
        held: toCredits(b.heldMicro),
        available: toCredits(b.availableMicro),
        entries: page.entries,
        nextCursor: page.nextCursor,
      };
    } catch (err) {
      if (err instanceof LedgerError && err.code === 'bad_cursor') throw badRequest('invalid cursor');
      if (err instanceof LedgerError && err.code === 'not_found') throw new HttpError(404, { error: err.message });
      throw err;
    }
  });
  r.get('/health', async (ctx) => {
    // The database out of reach is a degraded service, not a failed read: the snapshot still serves.
    const ledgerStatus = await ledger.status().catch((err: unknown) => {
      if (isConnectionLoss(err)) return null;
      throw err;
    });
    const gen = snapshots.generation!;
    const asOfIso = gen.manifest.as_of;
    ctx.body = {
      status: snapshots.lastError || !ledgerStatus ? 'degraded' : 'ok',
      generation: gen.id,
      computed_at: gen.manifest.computed_at,
      as_of: asOfIso,
      data_age_seconds: Math.round((Date.now() - Date.parse(asOfIso)) / 1000),
      loaded_at: gen.loadedAt,
      rows: gen.posts,
      platforms: [...gen.content.platforms].sort(),
      narratives: gen.maps.narratives.length,
      patterns: gen.maps.patterns.length,
      draining_generations: snapshots.draining,
      last_load_error: snapshots.lastError,
      ledger: ledgerStatus
        ? {
            backend: ledgerStatus.backend,
            available: true,
            last_seq: ledgerStatus.lastSeq,
            open_holds: ledgerStatus.openHolds,
            pending_writes: ledgerStatus.pendingWrites,
            recovered_ms: Math.round(ledgerStatus.recoveredMs),
            torn_tail_cut: ledgerStatus.tornTailCut,
          }
        : {
            backend: 'postgres',
            available: false,
            last_seq: null,
            open_holds: null,
            pending_writes: null,
            recovered_ms: null,
            torn_tail_cut: null,
          },
      search: {
        answer_workers: search.pool?.threads ?? 0,
        worker_restarts: search.pool?.restarts ?? 0,
        answer_cache: {
          entries: search.cache?.entries ?? 0,
          bytes: search.cache?.bytes ?? 0,
          hits: search.cache?.hits ?? 0,
          misses: search.cache?.misses ?? 0,
        },
        warm_up: warmUpOf(search.warmUp?.last ?? null),
      },
      read_cache: {
        entries: search.reads?.entries ?? 0,
        bytes: search.reads?.bytes ?? 0,
        hits: search.reads?.hits ?? 0,
        misses: search.reads?.misses ?? 0,
      },
      uptime_seconds: Math.round((Date.now() - startedAt.getTime()) / 1000),
    };
  });
  return r;
}
