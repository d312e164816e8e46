// Where a server keeps its jobs: with DATABASE_URL, PostgreSQL for the records, results and cache
// and pg-boss for the queue (every replica shares them); otherwise the files of DATA_DIR/jobs and
// a queue in memory (one process).
import type { Config } from '../../core/infra/config.ts';
import type { Logger } from '../../core/infra/log.ts';
import { FileJobBook, type JobBook } from './job-book.ts';
import { MemoryJobQueue, type JobQueue } from './job-queue.ts';
import { jobsDir, MAX_ATTEMPTS } from './job-runner.ts';
import { PgJobBook } from './pg-job-book.ts';
import { BossJobQueue } from './pg-job-queue.ts';

export function jobStorage(config: Config, log: Logger): { book: JobBook; queue: JobQueue } {
  if (config.DATABASE_URL)
    return {
      book: new PgJobBook(config.DATABASE_URL),
      queue: new BossJobQueue({
        databaseUrl: config.DATABASE_URL,
        queue: 'analysis-jobs',
        concurrency: config.JOB_CONCURRENCY,
        attempts: MAX_ATTEMPTS,
        expireSeconds: config.JOB_EXPIRE_SECONDS,
        onError: (err) => log.error({ err: err.message }, 'job queue error'),
      }),
    };
  return {
    book: new FileJobBook(jobsDir(config.dataDir), (file) => log.error({ file }, 'job record unreadable; skipped')),
    queue: new MemoryJobQueue(config.JOB_CONCURRENCY, (jobId, err) => log.error({ jobId, err: err.message }, 'job bookkeeping failed')),
  };
}
