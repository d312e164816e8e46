// The outbox on PostgreSQL (DATABASE_URL): every replica reads and writes the same events and
// attempts (outbox-migrations/). Two replicas that evaluate the same generation add the same
// events: INSERT ... ON CONFLICT DO NOTHING keeps one copy and only the inserting replica queues
// it, in the same transaction as the row, so a kept event is always a queued one. The lease
// (lease_until, on PostgreSQL's clock) keeps an event to one run; a run whose replica died frees it
// when the lease ends, which is when pg-boss hands its entry to another replica.
import path from 'node:path';
import type pg from 'pg';
import { migrate } from '../../core/infra/postgres/migrate.ts';
import { createPool, inTransaction, type PgPool } from '../../core/infra/postgres/pool.ts';
import type { TaskQueue, SqlExecutor } from '../queue/task-queue.ts';
import type { AlertEvent, DeliveryAttempt, DeliveryStatus, EventState, WaitingCounts } from './alert-model.ts';
import {
  ATTEMPTS_KEPT,
  EVENTS_KEPT,
  publicState,
  queueEntry,
  type Lease,
  type OutboxStore,
  type OutboxEntry,
  type AttemptResult,
} from './outbox-store.ts';

const OUTBOX_SCHEMA = 'alert_outbox';
const MIGRATIONS = path.join(import.meta.dirname, 'outbox-migrations');

interface EventRow {
  event: AlertEvent;
  status: DeliveryStatus;
  attempts: number;
  next_attempt_at: Date | null;
  delivered_at: Date | null;
  turn: number;
  window_start: Date;
  window_attempts: number;
}

const iso = (d: Date | null) => d?.toISOString() ?? null;

function entryOf(r: EventRow): OutboxEntry {
  return {
    event: r.event,
    status: r.status,
    attempts: r.attempts,
    next_attempt_at: iso(r.next_attempt_at),
    delivered_at: iso(r.delivered_at),
    turn: r.turn,
    window_start: r.window_start.toISOString(),
    window_attempts: r.window_attempts,
  };
}

const ENTRY_COLUMNS = 'event, status, attempts, next_attempt_at, delivered_at, turn, window_start, window_attempts';

export class PgOutboxStore implements OutboxStore {
  private readonly pool: PgPool;

  constructor(databaseUrl: string) {
    this.pool = createPool(databaseUrl, { max: 6, applicationName: 'content-intelligence alerts outbox' });
  }

  async open(): Promise<Array<{ entry: string; at: Date }>> {
    await migrate(this.pool, OUTBOX_SCHEMA, MIGRATIONS);
    // Pending events stay queued in pg-boss; nothing to queue again.
    return [];
  }

  async add(events: AlertEvent[], now: Date, queue: TaskQueue): Promise<AlertEvent[]> {
    if (events.length === 0) return [];
    const byId = new Map(events.map((e) => [e.id, e]));
    const enqueueIn = needsPgQueue(queue);
    const added = await inTransaction(this.pool, async (client) => {
      const { rows } = await client.query<{ event_id: string }>(
        `INSERT INTO alert_outbox.events (event_id, watch_id, event, status, next_attempt_at, window_start)
         SELECT id, watch, ev::json, 'pending', $4, $4 FROM unnest($1::text[], $2::text[], $3::text[]) AS x(id, watch, ev)
         ON CONFLICT (event_id) DO NOTHING RETURNING event_id`,
        [[...byId.keys()], [...byId.values()].map((e) => e.watch_id), [...byId.values()].map((e) => JSON.stringify(e)), now],
      );
      const db = executor(client);
      for (const r of rows) await enqueueIn(db, queueEntry(r.event_id, 1));
      return rows.map((r) => byId.get(r.event_id)!);
    });
    if (added.length) await this.trimEvents([...new Set(added.map((e) => e.watch_id))]);
    return added;
  }

  async lease(eventId: string, turn: number, _now: Date, leaseMs: number): Promise<Lease> {
    const { rows } = await this.pool.query<EventRow>(
      `UPDATE alert_outbox.events SET lease_until = now() + make_interval(secs => $3 / 1000.0)
       WHERE event_id = $1 AND turn = $2 AND status = 'pending' AND (lease_until IS NULL OR lease_until <= now())
       RETURNING ${ENTRY_COLUMNS}`,
      [eventId, turn, leaseMs],
    );
    if (rows[0]) return { entry: entryOf(rows[0]) };
    const held = await this.pool.query<{ lease_until: Date }>(
      `SELECT lease_until FROM alert_outbox.events
       WHERE event_id = $1 AND turn = $2 AND status = 'pending' AND lease_until > now()`,
      [eventId, turn],
    );
    return held.rows[0] ? { busyUntil: held.rows[0].lease_until } : { skip: true };
  }

  async record(eventId: string, turn: number, s: AttemptResult, queue: TaskQueue): Promise<void> {
    const a = s.attempt;
    const retry = s.next_attempt_at !== null;
    const enqueueIn = retry ? needsPgQueue(queue) : null;
    await inTransaction(this.pool, async (client) => {
      await client.query(
        // Not for an event forgotten meanwhile (its watch deleted mid-attempt).
        `INSERT INTO alert_outbox.attempts (event_id, watch_id, attempt, at, status, error, latency_ms, outcome)
         SELECT $1, $2, $3, $4, $5, $6, $7, $8 WHERE EXISTS (SELECT 1 FROM alert_outbox.events WHERE event_id = $1)`,
        [a.event_id, a.watch_id, a.attempt, a.at, a.status, a.error, Math.round(a.latency_ms), a.outcome],
      );
      const { rows } = await client.query<{ turn: number }>(
        `UPDATE alert_outbox.events SET attempts = attempts + 1, window_attempts = window_attempts + 1, status = $3,
           delivered_at = CASE WHEN $3 = 'delivered' THEN $4::timestamptz ELSE delivered_at END,
           next_attempt_at = $5, turn = turn + $6, lease_until = NULL
         WHERE event_id = $1 AND (turn = $2 OR $3 = 'delivered') RETURNING turn`,
        [eventId, turn, s.status, a.at, s.next_attempt_at, retry ? 1 : 0],
      );
      if (rows[0] && enqueueIn) await enqueueIn(executor(client), queueEntry(eventId, rows[0].turn), s.next_attempt_at!);
      // Redelivered meanwhile: the newer turn decides the state; the attempt still counts.
      if (!rows[0]) await client.query('UPDATE alert_outbox.events SET attempts = attempts + 1 WHERE event_id = $1', [eventId]);
    });
    await this.pool.query(
      `DELETE FROM alert_outbox.attempts WHERE watch_id = $1 AND seq <
         (SELECT seq FROM alert_outbox.attempts WHERE watch_id = $1 ORDER BY seq DESC OFFSET $2 LIMIT 1)`,
      [a.watch_id, ATTEMPTS_KEPT - 1],
    );
  }

  async park(eventId: string, turn: number): Promise<void> {
    await this.pool.query(
      `UPDATE alert_outbox.events SET status = 'paused', next_attempt_at = NULL, lease_until = NULL
       WHERE event_id = $1 AND turn = $2 AND status = 'pending'`,
      [eventId, turn],
    );
  }

  async requeue(watchId: string, eventId: string | null, now: Date, queue: TaskQueue): Promise<EventState[]> {
    const enqueueIn = needsPgQueue(queue);
    return inTransaction(this.pool, async (client) => {
      const { rows } = await client.query<EventRow & { event_id: string }>(
        `UPDATE alert_outbox.events SET status = 'pending', next_attempt_at = $3, turn = turn + 1, window_start = $3, window_attempts = 0
         WHERE watch_id = $1 AND ($2::text IS NULL AND status = 'paused' OR event_id = $2) RETURNING event_id, ${ENTRY_COLUMNS}`,
        [watchId, eventId, now],
      );
      const db = executor(client);
      for (const r of rows) await enqueueIn(db, queueEntry(r.event_id, r.turn));
      return rows.map((r) => publicState(entryOf(r)));
    });
  }

  async events(watchId: string, limit: number): Promise<EventState[]> {
    const { rows } = await this.pool.query<EventRow>(
      `SELECT ${ENTRY_COLUMNS} FROM alert_outbox.events WHERE watch_id = $1 ORDER BY seq DESC LIMIT $2`,
      [watchId, limit],
    );
    return rows.map((r) => publicState(entryOf(r)));
  }

  async attempts(watchId: string, limit: number): Promise<DeliveryAttempt[]> {
    const { rows } = await this.pool.query<Omit<DeliveryAttempt, 'at'> & { at: Date }>(
      `SELECT event_id, watch_id, attempt, at, status, error, latency_ms, outcome
       FROM alert_outbox.attempts WHERE watch_id = $1 ORDER BY seq DESC LIMIT $2`,
      [watchId, limit],
    );
    return rows.map((r) => ({ ...r, at: r.at.toISOString() }));
  }

  async lastDeliveredAt(watchId: string): Promise<Date | null> {
    const { rows } = await this.pool.query<{ last: Date | null }>(
      'SELECT max(delivered_at) AS last FROM alert_outbox.events WHERE watch_id = $1',
      [watchId],
    );
    return rows[0]?.last ?? null;
  }

  async forget(watchId: string): Promise<void> {
    await inTransaction(this.pool, async (client) => {
      await client.query('DELETE FROM alert_outbox.events WHERE watch_id = $1', [watchId]);
      await client.query('DELETE FROM alert_outbox.attempts WHERE watch_id = $1', [watchId]);
    });
  }

  /** One statement over the waiting events only (002_waiting.sql indexes them): a scrape's cost follows the backlog, not the history. */
  async countWaiting(): Promise<WaitingCounts> {
    const { rows } = await this.pool.query<{ status: keyof WaitingCounts; n: number }>(
      `SELECT status, count(*)::int AS n FROM alert_outbox.events WHERE status IN ('pending', 'paused') GROUP BY status`,
    );
    const n: WaitingCounts = { pending: 0, paused: 0 };
    for (const r of rows) n[r.status] = r.n;
    return n;
  }

  async close(): Promise<void> {
    await this.pool.end();
  }

  /** Past EVENTS_KEPT, each watch's oldest finished events go; pending and waiting ones stay. One statement for every watch of a publish. */
  private async trimEvents(watchIds: string[]): Promise<void> {
    await this.pool.query(
      `DELETE FROM alert_outbox.events e USING (
         SELECT event_id FROM (
           SELECT event_id, status, row_number() OVER (PARTITION BY watch_id ORDER BY seq DESC) AS newer
           FROM alert_outbox.events WHERE watch_id = ANY ($1)) ranked
         WHERE newer > $2 AND status IN ('delivered', 'failed')) old
       WHERE e.event_id = old.event_id`,
      [watchIds, EVENTS_KEPT],
    );
  }
}

function executor(client: pg.PoolClient): SqlExecutor {
  return { executeSql: (text, values) => client.query(text, values) };
}

/** The PostgreSQL outbox queues inside its transactions: its queue must live in PostgreSQL too. */
function needsPgQueue(queue: TaskQueue): NonNullable<TaskQueue['enqueueIn']> {
  if (!queue.enqueueIn) throw new Error('the PostgreSQL outbox needs a queue kept in PostgreSQL (pg-boss)');
  return queue.enqueueIn.bind(queue);
}
