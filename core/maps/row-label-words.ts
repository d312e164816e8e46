// Each row's label words (labels.ts, labelWordRuns) as the features stage computed them from the
// text an answer labels a row by (labelText), stored per segment in label-words.bin (the layout of
// core/text/term-lists.ts, RUN_BREAK as BREAK_ID): a search answer's emergent narratives read a row's
// label keys from here instead of analysing its text, which was the largest cost of an answer
// whose rows were new to the thread building it. A segment written before the file existed has
// none; its rows are analysed as before (keysOf gives null).
import fs from 'node:fs';
import path from 'node:path';
import { readTermLists } from '../text/term-lists.ts';
import type { GenerationSegment } from '../snapshots/segments.ts';
import { segmentDir } from '../snapshots/segments.ts';
import { keysOfRuns, RUN_BREAK } from './labels.ts';
import { toShared } from '../infra/shared-array.ts';
import { Utf8Column, type Utf8ColumnParts } from '../infra/utf8-column.ts';

export const LABEL_WORDS_FILE = 'label-words.bin';
/** RUN_BREAK's id in label-words.bin (no vocabulary entry). */
export const BREAK_ID = 0xffffffff;

/** The text an answer labels and describes a row by: its title and its description. */
export function labelText(title: string | null | undefined, description: string | null | undefined): string {
  return [title, description].filter(Boolean).join('. ');
}

/** One segment's label words as a thread reads them in place (SharedArrayBuffers where workers share them). */
export interface SegmentLabelWords {
  firstRow: number;
  rows: number;
  /** The segment's vocabulary: word id w is row w. */
  words: Utf8ColumnParts;
  /** Row r's word ids are ids[offsets[r] .. offsets[r + 1]). */
  offsets: Uint32Array;
  ids: Uint32Array;
}

/** The segments' label-words.bin files that exist, each as one thread's parts. */
export async function readSegmentLabelWords(
  generationDir: string,
  segments: readonly GenerationSegment[],
  shared: boolean,
): Promise<SegmentLabelWords[]> {
  const out: SegmentLabelWords[] = [];
  for (const s of segments) {
    const file = path.join(segmentDir(generationDir, s.id), LABEL_WORDS_FILE);
    if (!fs.existsSync(file)) continue;
    const t = await readTermLists(file);
    if (t.offsets.length - 1 !== s.rows) throw new Error(`${file}: ${t.offsets.length - 1} rows, the segment ${s.rows}`);
    const words = new Utf8Column(t.vocab.length);
    t.vocab.forEach((w, i) => words.set(i, w));
    words.seal(shared);
    out.push({
      firstRow: s.firstRow,
      rows: s.rows,
      words: words.parts(),
      offsets: shared ? toShared(t.offsets) : t.offsets,
      ids: shared ? toShared(t.ids) : t.ids,
    });
  }
  return out;
}

/** A generation's rows' label keys from its segments' label words (one per thread; words decoded once each). */
export class RowLabelWords {
  private readonly words: Utf8Column[];
  private readonly decoded: Array<Array<string | undefined>>;

  constructor(readonly segments: readonly SegmentLabelWords[]) {
    this.words = segments.map((s) => new Utf8Column(s.words.nulls.length, s.words));
    this.decoded = segments.map((s) => new Array<string | undefined>(s.words.nulls.length));
  }

  /** The row's label keys, as labelKeys(terms(its labelText)) gives them; null where its segment has no label words. */
  keysOf(row: number): string[] | null {
    for (let i = 0; i < this.segments.length; i++) {
      const s = this.segments[i]!;
      if (row < s.firstRow || row >= s.firstRow + s.rows) continue;
      const local = row - s.firstRow;
      const words = this.decoded[i]!;
      const runs: string[] = [];
      for (let j = s.offsets[local]!; j < s.offsets[local + 1]!; j++) {
        const id = s.ids[j]!;
        runs.push(id === BREAK_ID ? RUN_BREAK : (words[id] ??= this.words[i]!.get(id)!));
      }
      return keysOfRuns(runs);
    }
    return null;
  }
}
