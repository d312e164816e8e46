// What every pipeline stage receives and returns. Stages are plain async functions over a shared
// context, so the runner, the CLI, the scheduler and the tests drive them the same way.
import type { Config } from '../../core/infra/config.ts';
import type { DataDirLayout } from '../../core/infra/data-dir.ts';
import type { DuckDB } from '../../core/infra/duckdb.ts';
import type { Logger } from '../../core/infra/log.ts';
import type { Progress } from './progress.ts';
import type { StageOutputs } from './stage-output.ts';

export interface StageContext {
  config: Config;
  layout: DataDirLayout;
  /** The instant the snapshot describes; windows end here. */
  asOf: Date;
  /** Rebuild every segment from scratch (--full); otherwise the run is incremental when it can be (segment-plan.ts). */
  full?: boolean;
  log: Logger;
  /** Aborted on SIGTERM: stages check it between units of work and stop cleanly. */
  signal: AbortSignal;
  progress(label: string, total: number): Progress;
  /** The work store, opened once per run. */
  db(): Promise<DuckDB>;
  /**
   * A value more than one stage of this run reads (the map stages' post columns): loaded by the
   * first that asks, kept until the run ends. `key` must name everything the value depends on.
   */
  reuse<T>(key: string, load: () => Promise<T>): Promise<T>;
  /** What earlier stages handed on (the segment plan): put by the stage that makes it, read by those after (stage-output.ts). */
  outputs: StageOutputs;
}

/** What a stage reports (a JSON object): the runner logs it and returns it in its RunResult. Each stage declares its own. */
export type StageSummary = Record<string, unknown>;

/** A stage named N whose run reports an S (run/stage-list.ts knows every stage's). */
export interface Stage<N extends string = string, S extends StageSummary = StageSummary> {
  name: N;
  description: string;
  run(ctx: StageContext): Promise<S>;
}

export class StageAborted extends Error {
  constructor(stage: string) {
    super(`stage ${stage} abandoned on signal`);
  }
}
