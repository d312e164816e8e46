// serve/jobs/'s part of the server, built from the configuration: the job runner over its store
// and queue (file or PostgreSQL: open-job-store.ts), its retrieval threads and summariser.
import type { Config } from '../../core/infra/config.ts';
import type { Logger } from '../../core/infra/log.ts';
import { DAY_MS } from '../../core/snapshots/windows.ts';
import type { LedgerStore } from '../../ledger/ledger-store.ts';
import type { SnapshotStore } from '../generation/snapshot-store.ts';
import { JobRunner } from './job-runner.ts';
import { openJobStore } from './open-job-store.ts';
import { summariserFrom } from './summariser.ts';

interface JobPartsDeps {
  ledger: LedgerStore;
  snapshots: SnapshotStore;
  /** Where a 402 sends the caller (known once the server listens). */
  topUpUrl: () => string;
  /** Told of every run (the /metrics counters). */
  observeRun: (kind: string, outcome: string, seconds: number) => void;
}

export function jobParts(config: Config, log: Logger, deps: JobPartsDeps): JobRunner {
  return new JobRunner({
    ...deps,
    ...openJobStore(config, log),
    log,
    threads: config.JOB_THREADS,
    summariser: summariserFrom(config),
    statusPath: (id) => `${config.SERVICE_PREFIX}/intelligence/jobs/${id}`,
    retentionMs: config.JOB_RETENTION_DAYS * DAY_MS,
  });
}
