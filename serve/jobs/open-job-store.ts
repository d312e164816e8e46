// Where a server keeps its jobs and which runs next: with DATABASE_URL, PostgreSQL for the records,
// results and cache and pg-boss for the queue (every replica shares them); otherwise the files of
// DATA_DIR/jobs and a queue in memory of at most JOB_QUEUE_MAX waiting jobs (one process).
import type { Config } from '../../core/infra/config.ts';
import type { Logger } from '../../core/infra/log.ts';
import { MemoryTaskQueue } from '../queue/memory-task-queue.ts';
import { PgTaskQueue } from '../queue/pg-task-queue.ts';
import type { TaskQueue } from '../queue/task-queue.ts';
import { FileJobStore } from './file-job-store.ts';
import { jobsDir, MAX_ATTEMPTS } from './job-runner.ts';
import type { JobStore } from './job-store.ts';
import { PgJobStore } from './pg-job-store.ts';

export function openJobStore(config: Config, log: Logger): { store: JobStore; queue: TaskQueue } {
  if (config.DATABASE_URL)
    return {
      store: new PgJobStore(config.DATABASE_URL),
      queue: new PgTaskQueue({
        databaseUrl: config.DATABASE_URL,
        queue: 'analysis-jobs',
        concurrency: config.JOB_CONCURRENCY,
        attempts: MAX_ATTEMPTS,
        expireSeconds: config.JOB_EXPIRE_SECONDS,
        onError: (err) => log.error({ err: err.message }, 'job queue error'),
      }),
    };
  return {
    store: new FileJobStore(jobsDir(config.dataDir), (file) => log.error({ file }, 'job record unreadable; skipped')),
    queue: new MemoryTaskQueue(
      config.JOB_CONCURRENCY,
      (jobId, err) => log.error({ jobId, err: err.message }, 'job bookkeeping failed'),
      config.JOB_QUEUE_MAX,
    ),
  };
}
