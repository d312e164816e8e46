// The bound on the alert evaluator's queue (serve/alerts/alert-evaluator.ts): at most
// EVALUATIONS_WAITING_MAX evaluations wait behind the running one; one more drops the oldest
// waiting (null, with a warning), the others still run in order, and idle() waits for them all.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { DataDirLayout } from '../../core/infra/data-dir.ts';
import type { Logger } from '../../core/infra/log.ts';
import { AlertEvaluator, EVALUATIONS_WAITING_MAX } from '../../serve/alerts/alert-evaluator.ts';
import type { AlertOutbox } from '../../serve/alerts/alert-model.ts';
import type { WatchStore } from '../../serve/alerts/watch-store.ts';
import type { LoadedGeneration } from '../../serve/generation/loaded-generation.ts';

test('past EVALUATIONS_WAITING_MAX waiting, the oldest waiting evaluation is dropped with a warning', async () => {
  let release = () => {};
  const gate = new Promise<void>((r) => (release = r));
  const reads: number[] = [];
  // Watches read by each evaluation: the first waits on the gate, so the others queue behind it; none to evaluate.
  const watches = {
    all: async () => {
      reads.push(reads.length);
      if (reads.length === 1) await gate;
      return [];
    },
  } as unknown as WatchStore;
  const warnings: Array<Record<string, unknown>> = [];
  const log = {
    warn: (o: Record<string, unknown>) => warnings.push(o),
    info: () => {},
    error: () => {},
    debug: () => {},
  } as unknown as Logger;
  const evaluator = new AlertEvaluator({
    watches,
    outbox: {} as AlertOutbox,
    layout: {} as DataDirLayout,
    baseUrl: () => '',
    log,
  });
  const gen = (id: string) => ({ id }) as unknown as LoadedGeneration;
  const running = evaluator.enqueue(gen('g0'), null);
  await new Promise((r) => setImmediate(r));
  const waiting = Array.from({ length: EVALUATIONS_WAITING_MAX }, (_, i) => evaluator.enqueue(gen(`g${i + 1}`), null));
  assert.is(evaluator.dropped, 0, 'up to the bound nothing is dropped');
  const last = evaluator.enqueue(gen('past'), null);
  assert.is(evaluator.dropped, 1);
  assert.is(await waiting[0], null, 'the oldest waiting one is dropped at once');
  assert.equal(
    warnings.map((w) => w.generation),
    ['g1'],
  );
  release();
  await evaluator.idle();
  assert.equal(await Promise.all([running, ...waiting.slice(1), last]), Array(EVALUATIONS_WAITING_MAX + 1).fill(null));
  assert.is(reads.length, EVALUATIONS_WAITING_MAX + 1, 'every evaluation but the dropped one ran');
});

test.run();
