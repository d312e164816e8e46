// The pipeline schedule: node-cron expressions per stage ("run" for all stages, incremental once a
// generation is published; "full" for all stages rebuilt from scratch) from PIPELINE_SCHEDULE. The
// default runs incrementally every hour and rebuilds in full once a day at 03:15 UTC, a quiet hour.
// The run lock keeps firings from overlapping, within this process and against any other run on
// the same data directory; a firing that finds the lock held is skipped and logged, not queued.
import cron from 'node-cron';
import type { Config } from '../../core/infra/config.ts';
import type { Logger } from '../../core/infra/log.ts';
import { LockHeld } from '../../core/infra/lock.ts';
import { resolveStages, runStages } from './runner.ts';

interface Schedule {
  /** Stop firing; abandon the current run (if any) and wait for it to wind down. */
  stop(): Promise<void>;
}

/** Throws on a stage name or cron expression that is not one. */
export function validateSchedule(spec: Record<string, string>): void {
  for (const [what, expr] of Object.entries(spec)) {
    resolveStages([what === 'full' ? 'run' : what]);
    if (!cron.validate(expr)) throw new Error(`PIPELINE_SCHEDULE: "${expr}" for ${what} is not a valid cron expression`);
  }
}

export function startSchedule(config: Config, log: Logger): Schedule {
  validateSchedule(config.PIPELINE_SCHEDULE);
  const abort = new AbortController();
  let running: Promise<unknown> | null = null;
  const tasks = Object.entries(config.PIPELINE_SCHEDULE).map(([what, expr]) => {
    const full = what === 'full';
    const stages = resolveStages([full ? 'run' : what]);
    return cron.schedule(
      expr,
      async () => {
        if (abort.signal.aborted) return;
        if (running) {
          log.warn({ schedule: what }, 'schedule firing skipped: a run is in progress');
          return;
        }
        const run = runStages(stages, { config, log, signal: abort.signal, tty: false, full });
        running = run;
        try {
          const r = await run;
          log.info({ schedule: what, ms: r.ms }, 'scheduled run finished');
        } catch (err) {
          if (err instanceof LockHeld) log.warn({ schedule: what, err: err.message }, 'schedule firing skipped: lock held');
          else log.error({ schedule: what, err: (err as Error).message }, 'scheduled run failed');
        } finally {
          running = null;
        }
      },
      { name: `pipeline:${what}`, noOverlap: true },
    );
  });
  log.info({ schedule: config.PIPELINE_SCHEDULE }, 'pipeline schedule started');
  return {
    async stop() {
      for (const t of tasks) await t.stop();
      abort.abort();
      await running?.catch(() => {});
      for (const t of tasks) await t.destroy();
    },
  };
}
