// The segment plan (segment-plan.ts) as a stage output, and its invariants asserted where it crosses
// a stage boundary: when the features stage makes it and hands it on, when the index stage hands it
// on with its graphs' points, and whenever a later stage reads it. A plan that breaks one is a bug in
// the planning (or a file edited by hand), never bad input: the run stops before it writes anything
// from it.
import path from 'node:path';
import { assert, assertInt } from '../../core/infra/assert.ts';
import { segmentNumber } from '../../core/snapshots/segments.ts';
import type { StageContext } from '../context/stage-context.ts';
import type { StageOutput } from '../context/stage-output.ts';
import type { SegmentPlan } from './segment-plan.ts';

/**
 * The plan as a stage output: the features stage puts it once made, the index stage again with its
 * graphs' points, the later stages get it (ctx.outputs; checked each time: assertSegmentPlan below).
 */
export const SEGMENT_PLAN: StageOutput<SegmentPlan> = {
  file: (layout) => path.join(layout.artifacts, 'segment-plan.json'),
  missing: 'no segment plan: run the features stage first',
  check: (plan, asOf) => {
    if (plan.asOf !== asOf.toISOString())
      throw new Error(`the segment plan is for as-of ${plan.asOf}: run the features stage for ${asOf.toISOString()} first`);
    assertSegmentPlan(plan);
  },
};

/** The plan the features stage made for this run (the later stages read it). */
export function readPlan(ctx: StageContext): Promise<SegmentPlan> {
  return ctx.outputs.get(SEGMENT_PLAN);
}

const SEGMENT_ID = /^s\d{6,}$/;
const ROWS_MAX = 2 ** 31 - 1;

/** An ISO instant's epoch milliseconds; asserts it is one. */
function instantMs(iso: string, what: string): number {
  const ms = Date.parse(iso);
  assert(typeof iso === 'string' && Number.isFinite(ms), () => `${what} = ${JSON.stringify(iso)}, expected an ISO instant`);
  return ms;
}

/**
 * Segments in time order, each span ending no later than the next begins and only the last one
 * open-ended; rows laid end to end from 0 (each segment's first row the sum of those before), counts
 * non-negative and summing to the plan's; ids well formed and distinct; masked rows inside their
 * segment; what the plan says it computes within what it holds.
 */
export function assertSegmentPlan(plan: SegmentPlan): void {
  const where = `the segment plan for as-of ${plan.asOf}`;
  assert(plan.mode === 'full' || plan.mode === 'incremental', () => `${where}: mode ${JSON.stringify(plan.mode)}`);
  assert(
    (plan.mode === 'incremental') === (plan.fullBecause === null),
    () => `${where}: mode ${plan.mode} with fullBecause ${JSON.stringify(plan.fullBecause)} (null exactly when incremental)`,
  );
  assert(plan.segments.length > 0, () => `${where} has no segment (the head is always there)`);
  const ids = new Set<string>();
  let row = 0;
  let masked = 0;
  let previousTo: number | null = null;
  plan.segments.forEach((s, i) => {
    const seg = `${where}: segment ${i} (${s.id})`;
    assert(SEGMENT_ID.test(s.id) && segmentNumber(s.id) >= 1, () => `${seg}: not a segment id (s and 6 digits or more, from s000001)`);
    assert(!ids.has(s.id), () => `${seg}: its id is used twice`);
    ids.add(s.id);
    assert(segmentNumber(s.id) <= plan.lastSegment, () => `${seg}: numbered after the last segment used, ${plan.lastSegment}`);
    assertInt(s.rows, 0, ROWS_MAX, `${seg}: rows`);
    assert(s.firstRow === row, () => `${seg}: first row ${s.firstRow}, expected ${row} (the rows of the segments before it)`);
    const from = instantMs(s.from, `${seg}: from`);
    assert(previousTo === null || previousTo <= from, () => `${seg}: begins at ${s.from}, before the segment before it ends`);
    if (s.to === null) assert(i === plan.segments.length - 1, () => `${seg}: open-ended, but not the last (the head)`);
    else {
      previousTo = instantMs(s.to, `${seg}: to`);
      assert(from <= previousTo, () => `${seg}: ends at ${s.to}, before it begins at ${s.from}`);
    }
    assert(s.action === 'reuse' || s.action === 'build', () => `${seg}: action ${JSON.stringify(s.action)}`);
    assert(s.action === 'build' || plan.previous !== null, () => `${seg}: reused without a served generation`);
    if (s.base === null) assert(s.baseRows === 0, () => `${seg}: ${s.baseRows} base rows without a base`);
    else {
      assert(s.action === 'build' && plan.previous !== null, () => `${seg}: a base (${s.base}) needs a build and a served generation`);
      assertInt(s.baseRows, 0, s.rows, `${seg}: baseRows`);
    }
    for (const m of s.masked) assertInt(m, s.firstRow, s.firstRow + s.rows - 1, `${seg}: a masked row`);
    row += s.rows;
    masked += s.masked.length;
  });
  assert(plan.rows === row, () => `${where}: ${plan.rows} rows, its segments ${row}`);
  assert(plan.liveRows === row - masked, () => `${where}: ${plan.liveRows} live rows, its segments ${row} rows with ${masked} masked`);
  assertInt(plan.computeRows, 0, plan.liveRows, `${where}: computeRows`);
  assert(
    plan.mode === 'incremental' || plan.computeRows === plan.liveRows,
    () => `${where}: a full run computing ${plan.computeRows} of ${plan.liveRows} rows`,
  );
}
