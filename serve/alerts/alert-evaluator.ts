// The evaluation after each publish, in the serving process (never the pipeline): each generation
// the snapshot store swaps in, and the one served at start, is compared with the generation its
// manifest names as previous_generation (the one just replaced when that is it, else its maps read
// from disk; a pruned one is skipped with a log line), every watch is evaluated (evaluate.ts) and
// the events go to the outbox. At start the served generation is evaluated again: a server killed
// between a publish and its evaluation fires on restart, and the events' deterministic ids keep the
// outbox from holding any twice. One evaluation at a time, in publish order; the main thread
// yields between watches so searches are answered meanwhile. At most EVALUATIONS_WAITING_MAX wait
// behind the running one (each holds its generation's maps): past that the oldest waiting is
// dropped with a log line, as the newest generations are the ones watches are about.
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

/** Evaluations waiting at most behind the running one; a publish past it drops the oldest waiting. */
export const EVALUATIONS_WAITING_MAX = 4;
/** Reports kept (newest last). */
const REPORTS_KEPT = 20;

interface Waiting {
  gen: LoadedGeneration;
  held: GenerationSide | null;
  done: (report: EvaluationReport | null) => void;
}

export class AlertEvaluator {
  private readonly waiting: Waiting[] = [];
  private running: Promise<void> | null = null;
  /** Evaluations dropped past the bound, since the start. */
  dropped = 0;
  /** Every evaluation's report, newest last (bounded). */
  readonly reports: EvaluationReport[] = [];

  constructor(private readonly deps: EvaluatorDeps) {}

  /** Evaluate the generation served now and every one swapped in later. */
  attach(snapshots: SnapshotStore): void {
    snapshots.onSwap((gen, previous) => {
      // Only the maps and the posts' uuids and times of the replaced generation are kept: the rest of it is released.
      const held = previous
        ? { id: previous.id, asOfIso: previous.manifest.as_of, maps: previous.maps, rows: indexRows(previous.index) }
        : null;
      void this.enqueue(gen, held);
    });
  }

  /**
   * Queue one evaluation after those queued before; resolves with its report (null: no watches,
   * nothing to compare with, it failed, or it was dropped past EVALUATIONS_WAITING_MAX).
   */
  enqueue(gen: LoadedGeneration, held: GenerationSide | null): Promise<EvaluationReport | null> {
    return new Promise((done) => {
      if (this.waiting.length >= EVALUATIONS_WAITING_MAX) {
        const oldest = this.waiting.shift()!;
        this.dropped++;
        this.deps.log.warn(
          { generation: oldest.gen.id, waiting: EVALUATIONS_WAITING_MAX, dropped: this.dropped },
          'alerts: too many evaluations waiting; the oldest waiting one dropped (its changes are not evaluated)',
        );
        oldest.done(null);
      }
      this.waiting.push({ gen, held, done });
      this.running ??= this.drain();
    });
  }

  /** Runs the waiting evaluations one at a time, in order, until none is left. */
  private async drain(): Promise<void> {
    let next = this.waiting.shift();
    while (next) {
      const { gen, held, done } = next;
      done(
        await this.run(gen, held).catch((err: Error) => {
          this.deps.log.error({ generation: gen.id, err: err.stack ?? err.message }, 'alert evaluation failed');
          return null;
        }),
      );
      next = this.waiting.shift();
    }
    this.running = null;
  }

  /** Resolves once every queued evaluation has finished. */
  async idle(): Promise<void> {
    while (this.running) await this.running;
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
    return { id, asOfIso: manifest.as_of, maps: await loadMaps(dir, id), rows: uuidRows(uuids) };
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
        asOfIso: gen.manifest.as_of,
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
    if (this.reports.length > REPORTS_KEPT) this.reports.shift();
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
