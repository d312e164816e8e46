// Jobs for /metrics: how long runs take by kind and outcome (the runner reports each run), and the
// queue's depth, asked of the queue at each scrape (in memory: this process's; with pg-boss: the
// queue every replica shares).
import { Gauge, Histogram, type Registry } from 'prom-client';
import type { JobRunner } from '../jobs/job-runner.ts';

export class JobMetrics {
  private readonly runs: Histogram<'kind' | 'outcome'>;

  constructor(private readonly registry: Registry) {
    this.runs = new Histogram({
      name: 'ci_job_run_duration_seconds',
      help: 'Job runs, from taking the job to its end, by kind and outcome (succeeded, failed; error: the run threw, the queue brings the job back)',
      labelNames: ['kind', 'outcome'] as const,
      buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300],
      registers: [registry],
    });
  }

  /** The JobRunner's observeRun. */
  readonly observeRun = (kind: string, outcome: string, seconds: number): void => {
    this.runs.observe({ kind, outcome }, seconds);
  };

  /** The queue depth gauges, read from the runner's queue at each scrape. */
  watch(jobs: JobRunner): void {
    new Gauge({
      name: 'ci_jobs',
      help: 'Jobs waiting in the queue (state=queued) and being run (state=running)',
      labelNames: ['state'] as const,
      registers: [this.registry],
      async collect() {
        const d = await jobs.depth().catch(() => null);
        this.reset();
        if (!d) return;
        this.set({ state: 'queued' }, d.queued);
        this.set({ state: 'running' }, d.running);
      },
    });
  }
}
