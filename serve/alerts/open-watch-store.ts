// Where a server keeps its watches: with DATABASE_URL, PostgreSQL (every replica shares them);
// otherwise the files of DATA_DIR/alerts/watches (one process).
import type { Config } from '../../core/infra/config.ts';
import { dataDirLayout } from '../../core/infra/data-dir.ts';
import type { Logger } from '../../core/infra/log.ts';
import type { WatchStore } from './watch-store.ts';
import { FileWatchStore } from './file-watch-store.ts';
import { PgWatchStore } from './pg-watch-store.ts';

export function openWatchStore(config: Config, log: Logger): WatchStore {
  if (config.DATABASE_URL) return new PgWatchStore(config.DATABASE_URL);
  return new FileWatchStore(dataDirLayout(config.dataDir).alerts, (file) => log.error({ file }, 'watch file unreadable; skipped'));
}
