// Where the watches are kept: files in DATA_DIR/alerts/watches (one process; file-watch-store.ts)
// or PostgreSQL (DATABASE_URL, every replica; pg-watch-store.ts); open-watch-store.ts picks.
import type { Watch } from './alert-model.ts';

export interface WatchStore {
  open(): Promise<void>;
  /** Adds the watch unless the account already has ALERTS_PER_ACCOUNT: then false. */
  add(watch: Watch, perAccount: number): Promise<boolean>;
  get(id: string): Promise<Watch | null>;
  list(account: string): Promise<Watch[]>;
  /** Every watch (the evaluation after a publish). */
  all(): Promise<Watch[]>;
  /** False when there was none. */
  remove(id: string): Promise<boolean>;
  setPaused(id: string, paused: Watch['paused']): Promise<void>;
  /** How many watches deliver (active) and how many wait for a resume (paused): for /metrics. */
  countByState(): Promise<{ active: number; paused: number }>;
  close(): Promise<void>;
}
