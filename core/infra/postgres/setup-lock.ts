// One advisory lock for everything a starting process creates in the database: our schemas'
// migrations (migrate.ts) and pg-boss's schema and queues (serve/queue/pg-task-queue.ts). Replicas
// started together (an orchestrator starts them at once) then create it one at a time: DDL of two
// starters interleaved deadlocks (seen in pg-boss's create_queue) or fails on a half-made object.
// The lock is held on one connection for the work's duration and goes with that connection.
import type pg from 'pg';
import { checkOut, type PgPool } from './pool.ts';

const SETUP_LOCK = `hashtext('content-intelligence: schema setup')`;

/** `work` with the setup lock held, given the connection that holds it (the work may use others). */
export async function withSetupLock<T>(pool: PgPool, work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await checkOut(pool);
  try {
    await client.query(`SELECT pg_advisory_lock(${SETUP_LOCK})`);
    try {
      return await work(client);
    } finally {
      await client.query(`SELECT pg_advisory_unlock(${SETUP_LOCK})`).catch(() => undefined);
    }
  } finally {
    client.release();
  }
}
