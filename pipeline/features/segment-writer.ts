// The features stage's files of a built segment (layout: core/snapshots/segments.ts), row by row from where
// the plan says each row's data is (pipeline/segments/segment-plan.ts): an appended segment's old rows from
// its base, unchanged (masked ones included, at their rows); rows of a rebuilt segment that the
// served generation held, from the segment that held them; the rest from this run's computation.
//   uuids.txt, text-vectors.f32, visual-vectors.f32, doc-terms.bin, label-words.bin (only when every
//   row's label words are known: a base or source segment written before the file existed has none,
//   and the segment is then served by analysing its rows' text, until a full run rebuilds it)
// Its tables (enrichment, visual elements) are assembled by DuckDB (segment-tables.ts).
import fs from 'node:fs/promises';
import path from 'node:path';
import { assert } from '../../core/infra/assert.ts';
import { writeFileAtomic, writeFileAtomicAfter } from '../../core/infra/durable-fs.ts';
import { segmentDir } from '../../core/snapshots/segments.ts';
import { sqlString } from '../../core/infra/duckdb.ts';
import { readTermLists, writeTermLists, type TermLists } from '../../core/text/term-lists.ts';
import { BREAK_ID, LABEL_WORDS_FILE } from '../../core/maps/row-label-words.ts';
import { servedSegmentDir, type PlannedSegment, type SegmentPlan } from '../segments/segment-plan.ts';
import type { StageContext } from '../context/stage-context.ts';

/** What this run computed, by ci. */
export interface ComputedRows {
  text: Float32Array;
  textDim: number;
  visual: Float32Array;
  visualDim: number;
  /** Term id -> term, for docIds. */
  words: string[];
  docIds: Uint32Array[];
  /** Label word id -> word, for labelIds (BREAK_ID: a break, no word). */
  labelWords: string[];
  labelIds: Uint32Array[];
}

/** A float32 file as an aligned array. */
async function readFloats(file: string): Promise<Float32Array> {
  const buf = await fs.readFile(file);
  const out = new Float32Array(buf.length / 4);
  new Uint8Array(out.buffer).set(buf);
  return out;
}

interface ServedSegment {
  text: Float32Array;
  visual: Float32Array;
  terms: TermLists;
  /** Null: written before label-words.bin existed. */
  labelWords: TermLists | null;
}

async function readOptionalTermLists(file: string): Promise<TermLists | null> {
  try {
    return await readTermLists(file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
}

async function readServed(dir: string): Promise<ServedSegment> {
  return {
    text: await readFloats(path.join(dir, 'text-vectors.f32')),
    visual: await readFloats(path.join(dir, 'visual-vectors.f32')),
    terms: await readTermLists(path.join(dir, 'doc-terms.bin')),
    labelWords: await readOptionalTermLists(path.join(dir, LABEL_WORDS_FILE)),
  };
}

/** A segment's per-row word lists under construction, as ids into its own vocabulary (BREAK_ID kept as it is). */
class SegmentTermLists {
  readonly vocab = new Map<string, number>();
  readonly rows: Array<Uint32Array | undefined>;
  /** False once a row's list cannot be known (its source has no such file). */
  complete = true;

  constructor(rows: number) {
    this.rows = new Array(rows);
  }

  private idOf(w: string): number {
    let id = this.vocab.get(w);
    if (id === undefined) this.vocab.set(w, (id = this.vocab.size));
    return id;
  }

  /** The base's rows 0 .. from, their ids as they are: its vocabulary is taken first, keeping its ids. */
  adoptBase(base: TermLists, from: number): void {
    base.vocab.forEach((w) => this.idOf(w));
    for (let i = 0; i < from; i++) this.rows[i] = base.ids.subarray(base.offsets[i]!, base.offsets[i + 1]!);
  }

  /** Row `at` from ids into `words`. */
  set(at: number, ids: ArrayLike<number>, words: readonly string[]): void {
    this.rows[at] = Uint32Array.from(ids, (id) => (id === BREAK_ID ? BREAK_ID : this.idOf(words[id]!)));
  }

  /** Row `at` from row `src` of another segment's lists. */
  copy(at: number, from: TermLists | null, src: number): void {
    if (!from) this.complete = false;
    else this.set(at, from.ids.subarray(from.offsets[src]!, from.offsets[src + 1]!), from.vocab);
  }
}

interface SegmentRow {
  local_row: number;
  uuid: string;
  src_segment: string | null;
  src_row: number | null;
  ci: number | null;
  [k: string]: unknown;
}

export async function writeSegmentFeatures(ctx: StageContext, plan: SegmentPlan, seg: PlannedSegment, c: ComputedRows): Promise<void> {
  const db = await ctx.db();
  const dir = segmentDir(ctx.layout.artifacts, seg.id);
  await fs.mkdir(dir, { recursive: true });
  const rows = seg.rows;
  // An appended segment's files start with its base's, copied as they are (baseDir); the arrays here hold the rows after those.
  const from = seg.base ? seg.baseRows : 0;
  const baseDir = seg.base ? servedSegmentDir(plan, seg.base) : null;
  const uuids = new Array<string | undefined>(rows - from);
  const text = new Float32Array((rows - from) * c.textDim);
  const visual = new Float32Array((rows - from) * c.visualDim);
  const docs = new SegmentTermLists(rows);
  const labels = new SegmentTermLists(rows);
  const served = new Map<string, Promise<ServedSegment>>();
  const load = (id: string) => {
    let s = served.get(id);
    if (!s) served.set(id, (s = readServed(servedSegmentDir(plan, id))));
    return s;
  };
  const checkDims = (s: ServedSegment, id: string) =>
    assert(
      s.text.length / c.textDim === s.terms.offsets.length - 1 && s.visual.length / c.visualDim === s.terms.offsets.length - 1,
      () => `segment ${id}'s vectors are not of this run's dimensions (text ${c.textDim}, visual ${c.visualDim})`,
    );

  if (baseDir) {
    const terms = await readTermLists(path.join(baseDir, 'doc-terms.bin'));
    for (const [name, dim] of [
      ['text', c.textDim],
      ['visual', c.visualDim],
    ] as const) {
      const bytes = (await fs.stat(path.join(baseDir, `${name}-vectors.f32`))).size;
      assert(bytes === from * dim * 4, () => `segment ${seg.base}'s ${name} vectors are not ${from} rows of this run's dimension ${dim}`);
    }
    assert(terms.offsets.length - 1 === from, () => `segment ${seg.base} holds ${terms.offsets.length - 1} rows, the plan ${from}`);
    docs.adoptBase(terms, from);
    const baseLabels = await readOptionalTermLists(path.join(baseDir, LABEL_WORDS_FILE));
    if (baseLabels) labels.adoptBase(baseLabels, from);
    else labels.complete = false;
  }
  // The rows not from the base (all of them without one).
  const planned = await db.all<SegmentRow>(
    `SELECT local_row, uuid, src_segment, src_row, ci FROM plan_rows
      WHERE segment = ? ${seg.base ? `AND src_segment IS DISTINCT FROM ${sqlString(seg.base)}` : ''} ORDER BY local_row`,
    [seg.id],
  );
  for (const r of planned) {
    const local = Number(r.local_row);
    assert(local >= from, () => `segment ${seg.id}: row ${local} is its base's`);
    const at = local - from;
    uuids[at] = r.uuid;
    if (r.ci !== null) {
      const ci = Number(r.ci);
      text.set(c.text.subarray(ci * c.textDim, (ci + 1) * c.textDim), at * c.textDim);
      visual.set(c.visual.subarray(ci * c.visualDim, (ci + 1) * c.visualDim), at * c.visualDim);
      docs.set(local, c.docIds[ci]!, c.words);
      labels.set(local, c.labelIds[ci]!, c.labelWords);
    } else {
      const s = await load(r.src_segment!);
      checkDims(s, r.src_segment!);
      const src = Number(r.src_row);
      text.set(s.text.subarray(src * c.textDim, (src + 1) * c.textDim), at * c.textDim);
      visual.set(s.visual.subarray(src * c.visualDim, (src + 1) * c.visualDim), at * c.visualDim);
      docs.copy(local, s.terms, src);
      labels.copy(local, s.labelWords, src);
    }
  }
  for (let i = 0; i < rows; i++)
    assert((i < from || uuids[i - from] !== undefined) && docs.rows[i] !== undefined, () => `segment ${seg.id}: row ${i} has no source`);
  const write = (name: string, data: Uint8Array) =>
    baseDir ? writeFileAtomicAfter(path.join(dir, name), path.join(baseDir, name), data) : writeFileAtomic(path.join(dir, name), data);
  await write('uuids.txt', new TextEncoder().encode(uuids.length ? (uuids as string[]).join('\n') + '\n' : ''));
  await write('text-vectors.f32', new Uint8Array(text.buffer));
  await write('visual-vectors.f32', new Uint8Array(visual.buffer));
  await writeTermLists(path.join(dir, 'doc-terms.bin'), docs.vocab, docs.rows as Uint32Array[]);
  // Without every row's label words, no file (not a stale one of an earlier build of this segment either).
  if (labels.complete) await writeTermLists(path.join(dir, LABEL_WORDS_FILE), labels.vocab, labels.rows as Uint32Array[]);
  else await fs.rm(path.join(dir, LABEL_WORDS_FILE), { force: true });
}
