// Runs stages in order under the run lock, with one work-store connection, per-stage timings in
// the JSON log, and clean abandonment on an abort signal (SIGTERM): the running DuckDB query is
// interrupted, its transaction rolls back, and the previous generation stays served.
import type { Config } from '../core/config.ts';
import { dataDirLayout } from '../core/data-dir.ts';
import type { DuckDB } from '../core/duckdb.ts';
import type { Logger } from '../core/log.ts';
import { acquireLock, LockHeld } from '../core/lock.ts';
import { createProgress } from './progress.ts';
import { StageAborted, type Stage, type StageContext, type StageSummary } from './stage.ts';
import { STAGES } from './stages.ts';
import { openWorkStore } from './work-store.ts';

export interface RunOptions {
  config: Config;
  log: Logger;
  asOf?: Date;
  signal?: AbortSignal;
  tty?: boolean;
}

export interface StageResult {
  stage: string;
  ms: number;
  summary: StageSummary;
}

export interface RunResult {
  asOf: string;
  ms: number;
  stages: StageResult[];
}

export async function runStages(stages: Stage[], opts: RunOptions): Promise<RunResult> {
  const layout = dataDirLayout(opts.config.dataDir);
  const signal = opts.signal ?? new AbortController().signal;
  const asOf = opts.asOf ?? new Date();
  const lock = await acquireLock(layout.lock).catch((err) => {
    if (err instanceof LockHeld) throw new LockHeld(err.owner, 'another pipeline run holds the lock');
    throw err;
  });
  let db: DuckDB | null = null;
  const onAbort = () => db?.conn.interrupt();
  signal.addEventListener('abort', onAbort);
  const t0 = performance.now();
  const results: StageResult[] = [];
  try {
    const ctx: StageContext = {
      config: opts.config,
      layout,
      asOf,
      log: opts.log,
      signal,
      progress: (label, total) => createProgress(opts.log, label, total, { tty: opts.tty }),
      db: async () => (db ??= await openWorkStore(layout, { memoryLimit: opts.config.DUCKDB_MEMORY_LIMIT, threads: opts.config.DUCKDB_THREADS })),
    };
    for (const stage of stages) {
      if (signal.aborted) throw new StageAborted(stage.name);
      const s0 = performance.now();
      opts.log.info({ stage: stage.name, asOf: asOf.toISOString() }, 'stage started');
      let summary: StageSummary;
      try {
        summary = await stage.run(ctx);
      } catch (err) {
        if (signal.aborted) throw new StageAborted(stage.name);
        throw err;
      }
      const ms = Math.round(performance.now() - s0);
      const { perFile: _omit, ...brief } = summary as StageSummary & { perFile?: unknown };
      opts.log.info({ stage: stage.name, ms, summary: brief }, 'stage finished');
      results.push({ stage: stage.name, ms, summary });
    }
    return { asOf: asOf.toISOString(), ms: Math.round(performance.now() - t0), stages: results };
  } finally {
    signal.removeEventListener('abort', onAbort);
    (db as DuckDB | null)?.close();
    await lock.release();
  }
}

/** `run` = every stage; otherwise the named stages. */
export function resolveStages(names: string[]): Stage[] {
  if (names.length === 1 && names[0] === 'run') return STAGES;
  return names.map((n) => {
    const s = STAGES.find((x) => x.name === n);
    if (!s) throw new Error(`unknown stage "${n}" (stages: ${STAGES.map((x) => x.name).join(', ')}, or run)`);
    return s;
  });
}
