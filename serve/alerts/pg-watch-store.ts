// The watches on PostgreSQL (DATABASE_URL): one table every replica shares
// (watch-migrations/001_watches.sql). The per-account bound holds across replicas: a create takes
// a transaction-scoped advisory lock on its account before it counts, so two creates for one
// account on two replicas count one after the other.
import path from 'node:path';
import { migrate } from '../../core/infra/postgres/migrate.ts';
import { createPool, inTransaction, type PgPool } from '../../core/infra/postgres/pool.ts';
import type { WindowKey } from '../../core/snapshots/windows.ts';
import type { Watch, WatchConditions, WatchTarget } from './alert-model.ts';
import type { WatchStore } from './watch-store.ts';

const ALERTS_SCHEMA = 'alerts';
const MIGRATIONS = path.join(import.meta.dirname, 'watch-migrations');

interface WatchRow {
  id: string;
  account_id: string;
  name: string | null;
  target: WatchTarget;
  windows: WindowKey[];
  conditions: WatchConditions;
  url: string;
  created_at: Date;
  secret_version: number;
  paused: Watch['paused'];
}

const COLUMNS = 'id, account_id, name, target, windows, conditions, url, created_at, secret_version, paused';

/** The row as the API shows a watch (fields in the order of alert-model.ts; jsonb does not keep key order). */
function watchOf(r: WatchRow): Watch {
  return {
    id: r.id,
    account: r.account_id,
    name: r.name,
    target: r.target,
    windows: r.windows,
    conditions: r.conditions,
    url: r.url,
    created_at: r.created_at.toISOString(),
    secret_version: r.secret_version,
    paused: r.paused ? { at: r.paused.at, reason: r.paused.reason } : null,
  };
}

export class PgWatchStore implements WatchStore {
  private readonly pool: PgPool;

  constructor(databaseUrl: string) {
    this.pool = createPool(databaseUrl, { max: 4, applicationName: 'content-intelligence alerts' });
  }

  async open(): Promise<void> {
    await migrate(this.pool, ALERTS_SCHEMA, MIGRATIONS);
  }

  add(w: Watch, perAccount: number): Promise<boolean> {
    return inTransaction(this.pool, async (client) => {
      await client.query(`SELECT pg_advisory_xact_lock(hashtext('alerts:' || $1))`, [w.account]);
      const { rows } = await client.query<{ n: number }>('SELECT count(*)::int AS n FROM alerts.watches WHERE account_id = $1', [
        w.account,
      ]);
      if (rows[0]!.n >= perAccount) return false;
      await client.query(`INSERT INTO alerts.watches (${COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`, [
        w.id,
        w.account,
        w.name,
        JSON.stringify(w.target),
        w.windows,
        JSON.stringify(w.conditions),
        w.url,
        new Date(w.created_at),
        w.secret_version,
        w.paused ? JSON.stringify(w.paused) : null,
      ]);
      return true;
    });
  }

  async get(id: string): Promise<Watch | null> {
    const { rows } = await this.pool.query<WatchRow>(`SELECT ${COLUMNS} FROM alerts.watches WHERE id = $1`, [id]);
    return rows[0] ? watchOf(rows[0]) : null;
  }

  async list(account: string): Promise<Watch[]> {
    const { rows } = await this.pool.query<WatchRow>(
      `SELECT ${COLUMNS} FROM alerts.watches WHERE account_id = $1 ORDER BY created_at, id`,
      [account],
    );
    return rows.map(watchOf);
  }

  async all(): Promise<Watch[]> {
    const { rows } = await this.pool.query<WatchRow>(`SELECT ${COLUMNS} FROM alerts.watches ORDER BY created_at, id`);
    return rows.map(watchOf);
  }

  async remove(id: string): Promise<boolean> {
    const r = await this.pool.query('DELETE FROM alerts.watches WHERE id = $1', [id]);
    return r.rowCount === 1;
  }

  async setPaused(id: string, paused: Watch['paused']): Promise<void> {
    await this.pool.query('UPDATE alerts.watches SET paused = $2 WHERE id = $1', [id, paused ? JSON.stringify(paused) : null]);
  }

  async countByState(): Promise<{ active: number; paused: number }> {
    const { rows } = await this.pool.query<{ active: number; paused: number }>(
      'SELECT count(*) FILTER (WHERE paused IS NULL)::int AS active, count(*) FILTER (WHERE paused IS NOT NULL)::int AS paused FROM alerts.watches',
    );
    return rows[0]!;
  }

  async close(): Promise<void> {
    await this.pool.end();
  }
}
