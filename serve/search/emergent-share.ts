// Emergent narratives shared through PostgreSQL (DATABASE_URL), so an id a search returned on one
// replica reads on every replica for its hour (docs/scaling.md). The replica that formed them
// keeps answering from memory (emergent-store.ts); it writes them in batches a tenth of a second
// apart, and renews a narrative's expiry at most once a minute (so across replicas the hour holds
// to within a minute); another replica reads the table on a miss.
import path from 'node:path';
import { migrate } from '../../core/infra/postgres/migrate.ts';
import { createPool, type PgPool } from '../../core/infra/postgres/pool.ts';
import type { EmergentNarrative } from './answer-narratives.ts';

const MIGRATIONS = path.join(import.meta.dirname, 'migrations');
const FLUSH_MS = 100;
const RENEW_AFTER_MS = 60_000;

interface Pending {
  generation: string;
  e: EmergentNarrative;
  expires: number;
}

export class EmergentShare {
  private readonly pool: PgPool;
  private pending = new Map<string, Pending>();
  /** When this replica last wrote each narrative's expiry. */
  private written = new Map<string, number>();
  private timer: NodeJS.Timeout | null = null;
  private flushing: Promise<void> = Promise.resolve();
  private lastSweep = 0;

  constructor(
    databaseUrl: string,
    private readonly onError: (err: Error) => void,
  ) {
    this.pool = createPool(databaseUrl, { max: 2, applicationName: 'content-intelligence emergent' });
  }

  async open(): Promise<void> {
    await migrate(this.pool, 'emergent', MIGRATIONS);
  }

  /** Queue narratives a search formed, expiring at `expires` (ms). */
  write(generation: string, list: readonly EmergentNarrative[], expires: number): void {
    for (const e of list) {
      const id = e.narrative.id;
      if ((this.written.get(id) ?? 0) > expires - RENEW_AFTER_MS) continue;
      this.pending.set(id, { generation, e, expires });
    }
    if (this.pending.size > 0 && !this.timer) {
      this.timer = setTimeout(() => {
        this.timer = null;
        this.flushing = this.flushing.then(() => this.flush()).catch((err: Error) => this.onError(err));
      }, FLUSH_MS);
      this.timer.unref();
    }
  }

  private async flush(): Promise<void> {
    const batch = [...this.pending.values()];
    this.pending = new Map();
    if (batch.length === 0) return;
    await this.pool.query(
      `INSERT INTO emergent.narratives (id, generation, narrative, members, daily_counts, expires_at)
       SELECT x.id, x.generation, x.narrative, x.members, x.daily_counts, to_timestamp(x.expires / 1000.0)
       FROM json_to_recordset($1::json) AS x(id text, generation text, narrative json, members integer[], daily_counts integer[], expires double precision)
       ON CONFLICT (id) DO UPDATE SET generation = EXCLUDED.generation, narrative = EXCLUDED.narrative, members = EXCLUDED.members,
         daily_counts = EXCLUDED.daily_counts, expires_at = greatest(emergent.narratives.expires_at, EXCLUDED.expires_at)`,
      [
        JSON.stringify(
          batch.map((p) => ({
            id: p.e.narrative.id,
            generation: p.generation,
            narrative: p.e.narrative,
            members: `{${p.e.members.join(',')}}`,
            daily_counts: `{${p.e.dailyCounts.join(',')}}`,
            expires: p.expires,
          })),
        ),
      ],
    );
    for (const p of batch) this.written.set(p.e.narrative.id, p.expires);
    const now = Date.now();
    if (now - this.lastSweep > RENEW_AFTER_MS) {
      this.lastSweep = now;
      for (const [id, at] of this.written) if (at <= now) this.written.delete(id);
      await this.pool.query('DELETE FROM emergent.narratives WHERE expires_at <= now()');
    }
  }

  /** A narrative another replica formed on `generation`, still within its hour; with its expiry (ms). */
  async read(id: string, generation: string): Promise<{ e: EmergentNarrative; expires: number } | null> {
    const { rows } = await this.pool.query<{
      narrative: EmergentNarrative['narrative'];
      members: number[];
      daily_counts: number[];
      expires_at: Date;
    }>(
      'SELECT narrative, members, daily_counts, expires_at FROM emergent.narratives WHERE id = $1 AND generation = $2 AND expires_at > now()',
      [id, generation],
    );
    const r = rows[0];
    return r
      ? { e: { narrative: r.narrative, members: Int32Array.from(r.members), dailyCounts: r.daily_counts }, expires: r.expires_at.getTime() }
      : null;
  }

  /** Write what is queued, then close. */
  async close(): Promise<void> {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = null;
      this.flushing = this.flushing.then(() => this.flush());
    }
    await this.flushing.catch((err: Error) => this.onError(err));
    await this.pool.end();
  }
}
