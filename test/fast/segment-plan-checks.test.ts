// The segment plan's invariants (pipeline/segments/plan-output.ts): a plan as the planner makes them
// passes, and each way of breaking one is stopped by its assertion, when a stage hands the plan on or
// reads it back.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { AssertionFailed } from '../../core/infra/assert.ts';
import { assertSegmentPlan, SEGMENT_PLAN } from '../../pipeline/segments/plan-output.ts';
import type { PlannedSegment, SegmentPlan } from '../../pipeline/segments/segment-plan.ts';

const AS_OF = new Date('2026-11-01T06:00:00.000Z');

function segment(
  id: string,
  firstRow: number,
  rows: number,
  from: string,
  to: string | null,
  more: Partial<PlannedSegment> = {},
): PlannedSegment {
  return {
    id,
    from,
    to,
    rows,
    textPoints: 0,
    visualPoints: 0,
    textTails: [],
    builtIn: null,
    last: null,
    action: 'build',
    base: null,
    baseRows: 0,
    firstRow,
    masked: [],
    ...more,
  };
}

/** An incremental plan: a reused segment with a deleted row, the head appended to. */
function goodPlan(): SegmentPlan {
  return {
    mode: 'incremental',
    fullBecause: null,
    asOf: AS_OF.toISOString(),
    previous: { generation: 'g000002', dir: '/data/snapshots/g000002' },
    segments: [
      segment('s000001', 0, 10, '2026-10-01T00:00:00.000Z', '2026-10-20T00:00:00.000Z', {
        action: 'reuse',
        builtIn: 'g000001',
        masked: [3],
      }),
      segment('s000003', 10, 6, '2026-10-20T00:00:00.000Z', null, { base: 's000002', baseRows: 4 }),
    ],
    rows: 16,
    liveRows: 15,
    computeRows: 2,
    lastSegment: 3,
  };
}

function fails(change: (p: SegmentPlan) => void, expected: RegExp): void {
  const p = goodPlan();
  change(p);
  try {
    assertSegmentPlan(p);
  } catch (err) {
    assert.instance(err, AssertionFailed);
    assert.match((err as Error).message, expected);
    return;
  }
  assert.unreachable(`no assertion fired (expected ${expected})`);
}

test('a plan as the planner makes it passes, full or incremental', () => {
  assertSegmentPlan(goodPlan());
  assertSegmentPlan({
    mode: 'full',
    fullBecause: 'no generation published yet',
    asOf: AS_OF.toISOString(),
    previous: null,
    segments: [segment('s000001', 0, 0, '1970-01-01T00:00:00.000Z', null)],
    rows: 0,
    liveRows: 0,
    computeRows: 0,
    lastSegment: 1,
  });
});

test('segments in time order, only the last open-ended', () => {
  fails((p) => (p.segments[1]!.from = '2026-10-19T00:00:00.000Z'), /begins at .* before the segment before it ends/);
  fails((p) => (p.segments[0]!.to = '2026-09-01T00:00:00.000Z'), /ends at .* before it begins/);
  fails((p) => (p.segments[0]!.to = null), /open-ended, but not the last/);
  fails((p) => (p.segments[0]!.from = 'yesterday'), /expected an ISO instant/);
  fails((p) => (p.segments = []), /has no segment/);
});

test('rows laid end to end, non-negative, summing to the total', () => {
  fails((p) => (p.segments[1]!.firstRow = 11), /first row 11, expected 10/);
  fails((p) => (p.segments[0]!.rows = -1), /rows = -1, expected an integer/);
  fails((p) => (p.rows = 17), /17 rows, its segments 16/);
  fails((p) => (p.liveRows = 16), /16 live rows, its segments 16 rows with 1 masked/);
  fails((p) => (p.segments[0]!.masked = [10]), /a masked row = 10/);
  fails((p) => (p.computeRows = 16), /computeRows = 16/);
  fails((p) => (p.segments[1]!.baseRows = 7), /baseRows = 7/);
  fails((p) => (p.segments[1]!.base = null), /4 base rows without a base/);
});

test('ids well formed, distinct and numbered up to the last used', () => {
  fails((p) => (p.segments[1]!.id = 'seg-3'), /not a segment id/);
  fails((p) => (p.segments[1]!.id = 's000000'), /not a segment id/);
  fails((p) => (p.segments[1]!.id = 's000001'), /used twice/);
  fails((p) => (p.lastSegment = 2), /numbered after the last segment used, 2/);
});

test('what a run reuses or appends to needs a served generation; the mode says why', () => {
  fails((p) => (p.previous = null), /reused without a served generation/);
  fails((p) => (p.fullBecause = 'asked for (--full)'), /mode incremental with fullBecause "asked for/);
  fails((p) => ((p.mode = 'full'), (p.fullBecause = 'asked for (--full)')), /a full run computing 2 of 15 rows/);
});

test('the stage output checks a plan when it is handed on and when it is read', () => {
  const bad = goodPlan();
  bad.rows = 3;
  assert.throws(
    () => SEGMENT_PLAN.check(bad, AS_OF),
    (err: Error) => err instanceof AssertionFailed,
  );
  assert.throws(
    () => SEGMENT_PLAN.check(goodPlan(), new Date('2026-11-02T00:00:00.000Z')),
    /the segment plan is for as-of 2026-11-01T06:00:00.000Z: run the features stage for 2026-11-02T00:00:00.000Z first/,
  );
  SEGMENT_PLAN.check(goodPlan(), AS_OF);
});

test.run();
