// The evaluation after each publish, in the serving process (never the pipeline): each generation
// the snapshot store swaps in, and the one served at start, is compared with the generation its
// manifest names as previous_generation (the one just replaced when that is it, else its maps read
// from disk; a pruned one is skipped with a log line), every watch is evaluated (evaluate.ts) and
// the events go to the outbox. At start the served generation is evaluated again: a server killed
// between a publish and its evaluation fires on restart, and the events' deterministic ids keep the
// outbox from holding any twice. One evaluation at a time, in publish order; the main thread
// yields between watches so searches are answered meanwhile.
import path from 'node:path';
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { DataDirLayout } from '../../core/infra/data-dir.ts';
import { pathExists } from '../../core/infra/durable-fs.ts';
import { generationDir, readManifest } from '../../core/snapshots/generations.ts';
import { readGenerationUuids } from '../../core/snapshots/segments.ts';
import type { Logger } from '../../core/infra/log.ts';
import type { LoadedGeneration } from '../generation/loaded-generation.ts';
import type { SnapshotStore } from '../generation/snapshot-store.ts';
import { loadMaps } from '../generation/load-maps.ts';
import type { AlertEvent, AlertOutbox } from './alert-model.ts';
import type { WatchStore } from './watch-store.ts';
import { createEvaluation, type GenerationSide } from './evaluate.ts';
import { eventPosts } from './event-posts.ts';
import { indexRows, uuidRows } from './story-links.ts';

interface EvaluatorDeps {
  watches: WatchStore;
  outbox: AlertOutbox;
  layout: DataDirLayout;
  /** {base_url} (known once the server listens). */
  baseUrl: () => string;
  log: Logger;
  /** Told of each finished evaluation and its events (the /metrics counters). */
  onEvaluated?: (events: readonly AlertEvent[]) => void;
}

/** What one evaluation did (the log line; tests and the bench read it). */
interface EvaluationReport {
  generation: string;
  previous: string;
  watches: number;
  events: AlertEvent[];
  /** Events the outbox did not hold yet. */
  added: number;
  /** Evaluating the watches alone, and the whole run (the previous maps' load and the outbox included). */
  evaluateMs: number;
  ms: number;
}

export class AlertEvaluator {
  private chain: Promise<unknown> = Promise.resolve();
  /** Every evaluation's report, newest last (bounded). */
  readonly reports: EvaluationReport[] = [];

  constructor(private readonly deps: EvaluatorDeps) {}

  /** Evaluate the generation served now and every one swapped in later. */
  attach(snapshots: SnapshotStore): void {
    snapshots.onSwap((gen, previous) => {
      // Only the maps and the posts' uuids and times of the replaced generation are kept: the rest of it is released.
      const held = previous
        ? { id: previous.id, asOf: previous.manifest.as_of, maps: previous.maps, rows: indexRows(previous.index) }
        : null;
      void this.enqueue(gen, held);
    });
  }

  /** Queue one evaluation after those queued before; resolves with its report (null: no watches, nothing to compare with, or it failed). */
  enqueue(gen: LoadedGeneration, held: GenerationSide | null): Promise<EvaluationReport | null> {
    const run = this.chain.then(() =>
      this.run(gen, held).catch((err: Error) => {
        this.deps.log.error({ generation: gen.id, err: err.stack ?? err.message }, 'alert evaluation failed');
        return null;
      }),
    );
    this.chain = run;
    return run;
  }

  /** Resolves once every queued evaluation has finished. */
  async idle(): Promise<void> {
    await this.chain;
  }

  /** The previous generation's side: the one held when it is the manifest's previous_generation, else read from disk. */
  private async previousOf(gen: LoadedGeneration, held: GenerationSide | null): Promise<GenerationSide | null> {
    const id = gen.manifest.previous_generation;
    if (!id) {
      this.deps.log.info({ generation: gen.id }, 'alerts: the first generation has nothing to compare with; not evaluated');
      return null;
    }
    if (held?.id === id) return held;
    const dir = generationDir(this.deps.layout, id);
    if (!(await pathExists(path.join(dir, 'manifest.json')))) {
      this.deps.log.info({ generation: gen.id, previous: id }, 'alerts: the previous generation was pruned; not evaluated');
      return null;
    }
    const manifest = await readManifest(this.deps.layout, id);
    // Its posts by their uuids: what its narratives are compared by.
    const uuids = readGenerationUuids(dir, manifest.segments ?? []);
    return { id, asOf: manifest.as_of, maps: await loadMaps(dir, id), rows: uuidRows(uuids) };
  }

  private async run(gen: LoadedGeneration, held: GenerationSide | null): Promise<EvaluationReport | null> {
    const t0 = performance.now();
    // Without watches nothing is read (at start the previous maps would be loaded from disk for nothing).
    const watches = await this.deps.watches.all();
    if (watches.length === 0) return null;
    const before = await this.previousOf(gen, held);
    if (!before) return null;
    const t1 = performance.now();
    const evaluate = createEvaluation({
      after: {
        id: gen.id,
        asOf: gen.manifest.as_of,
        computedAt: gen.manifest.computed_at,
        maps: gen.maps,
        rows: indexRows(gen.index),
        posts: (ln) => eventPosts(gen, ln),
      },
      before,
      baseUrl: this.deps.baseUrl(),
      now: new Date().toISOString(),
    });
    const events: AlertEvent[] = [];
    for (const w of watches) {
      for (const e of evaluate(w)) events.push(e);
      // A turn of the event loop between watches: requests waiting meanwhile are answered.
      await nextTurn();
    }
    const evaluateMs = performance.now() - t1;
    const added = events.length ? (await this.deps.outbox.add(events)).length : 0;
    const report: EvaluationReport = {
      generation: gen.id,
      previous: before.id,
      watches: watches.length,
      events,
      added,
      evaluateMs: Math.round(evaluateMs * 10) / 10,
      ms: Math.round((performance.now() - t0) * 10) / 10,
    };
    this.deps.onEvaluated?.(events);
    this.reports.push(report);
    if (this.reports.length > 20) this.reports.shift();
    this.deps.log.info(
      {
        generation: gen.id,
        previous: before.id,
        watches: watches.length,
        events: events.length,
        added,
        evaluateMs: report.evaluateMs,
        ms: report.ms,
      },
      'alerts evaluated',
    );
    return report;
  }
}
