// The data directory layout (docs/operations.md, "Data directory"), in one place so the pipeline, the server and the
// tests never spell a path twice.
import path from 'node:path';

export interface DataDirLayout {
  root: string;
  landing: string;
  quarantine: string;
  snapshots: string;
  current: string;
  ledger: string;
  jobs: string;
  /** Watches (without DATABASE_URL) and the webhook signing key (serve/alerts). */
  alerts: string;
  /** Pipeline working state: the DuckDB working store and stage artifacts awaiting publish. */
  work: string;
  workDb: string;
  artifacts: string;
  lock: string;
  /** The last pipeline run's stages and timings (core/infra/pipeline-run.ts), read by the server's /metrics. */
  lastRun: string;
  truth: string;
}

export function dataDirLayout(root: string): DataDirLayout {
  const r = path.resolve(root);
  const work = path.join(r, 'work');
  return {
    root: r,
    landing: path.join(r, 'landing'),
    quarantine: path.join(r, 'quarantine'),
    snapshots: path.join(r, 'snapshots'),
    current: path.join(r, 'snapshots', 'CURRENT'),
    ledger: path.join(r, 'ledger'),
    jobs: path.join(r, 'jobs'),
    alerts: path.join(r, 'alerts'),
    work,
    workDb: path.join(work, 'pipeline.duckdb'),
    artifacts: path.join(work, 'artifacts'),
    lock: path.join(work, 'pipeline.lock'),
    lastRun: path.join(work, 'last-run.json'),
    truth: path.join(r, 'truth'),
  };
}
