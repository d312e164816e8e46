// Where a server keeps its webhook events and which queue delivers them: with DATABASE_URL, the
// PostgreSQL outbox and pg-boss's queue 'webhook-deliveries' (every replica delivers; an event
// whose replica died is taken by another); otherwise the journal of DATA_DIR/alerts/outbox and a
// queue in memory (one process; pending events are queued again at the next start).
import type { Config } from '../../core/infra/config.ts';
import { dataDirLayout } from '../../core/infra/data-dir.ts';
import type { Logger } from '../../core/infra/log.ts';
import { MemoryTaskQueue } from '../queue/memory-task-queue.ts';
import { PgTaskQueue } from '../queue/pg-task-queue.ts';
import { FileOutboxStore } from './file-outbox-store.ts';
import { PgOutboxStore } from './pg-outbox-store.ts';
import type { OutboxStore } from './outbox-store.ts';
import type { TaskQueue } from '../queue/task-queue.ts';

const DELIVERY_QUEUE = 'webhook-deliveries';
/** Runs of one queue entry at most in pg-boss: it re-runs an entry only when its replica died mid-run (or its bookkeeping failed). */
const QUEUE_RUNS = 20;

/**
 * A run expires (and its event goes to another replica) a few seconds after the attempt's own
 * timeout: long enough for a live replica to record what it did, short enough that a dead one's
 * event waits seconds, not minutes. The lease ends a second before, so the re-run finds it free.
 */
function deliveryExpiry(timeoutMs: number): { expireSeconds: number; leaseMs: number } {
  const expireSeconds = Math.ceil(timeoutMs / 1000) + 5;
  return { expireSeconds, leaseMs: (expireSeconds - 1) * 1000 };
}

export function openOutboxStore(config: Config, log: Logger): { store: OutboxStore; queue: TaskQueue; leaseMs: number } {
  const alertsDir = dataDirLayout(config.dataDir).alerts;
  const { expireSeconds, leaseMs } = deliveryExpiry(config.ALERTS_TIMEOUT_MS);
  const onError = (err: Error) => log.error({ err: err.message }, 'webhook delivery queue error');
  const store = config.DATABASE_URL
    ? new PgOutboxStore(config.DATABASE_URL)
    : new FileOutboxStore(alertsDir, (file, lines) => log.error({ file, lines }, 'outbox journal lines unreadable; skipped'));
  const queue = config.DATABASE_URL
    ? new PgTaskQueue({
        databaseUrl: config.DATABASE_URL,
        queue: DELIVERY_QUEUE,
        concurrency: config.ALERTS_CONCURRENCY,
        attempts: QUEUE_RUNS,
        expireSeconds,
        onError,
      })
    : new MemoryTaskQueue(config.ALERTS_CONCURRENCY, (_entry, err) => onError(err));
  return { store, queue, leaseMs };
}
