// A value one stage makes and later stages read (the segment plan: segments/segment-plan.ts), handed
// over through the stage context: kept for the rest of the run as the text its file holds, and that
// file written, as the stages' other outputs are (artifacts/*.json), so a stage run by itself in a new
// process (`npm run pipeline -- index` after `-- features`) reads it back. Every reader gets its own
// copy, parsed from that text, and each value put or read is checked.
import fs from 'node:fs/promises';
import path from 'node:path';
import { writeFileAtomic } from '../../core/infra/durable-fs.ts';
import type { DataDirLayout } from '../../core/infra/data-dir.ts';

export interface StageOutput<T> {
  /** Its file in the data directory. */
  file(layout: DataDirLayout): string;
  /** The error when no stage has made it. */
  missing: string;
  /** Throws when a value put or read does not hold (assertions) or was made for another as-of than the run's (an error). */
  check(value: T, asOf: Date): void;
}

/** The outputs of one run, by file. */
export class StageOutputs {
  private readonly texts = new Map<string, string>();
  constructor(
    private readonly layout: DataDirLayout,
    private readonly asOf: Date,
  ) {}

  /** Hands `value` to the later stages: checked, written to its file, kept for this run. */
  async put<T>(out: StageOutput<T>, value: T): Promise<void> {
    out.check(value, this.asOf);
    const file = out.file(this.layout);
    const text = JSON.stringify(value);
    await fs.mkdir(path.dirname(file), { recursive: true });
    await writeFileAtomic(file, text);
    this.texts.set(file, text);
  }

  /** The value an earlier stage put: this run's, else its file's (an earlier process's), checked. */
  async get<T>(out: StageOutput<T>): Promise<T> {
    const file = out.file(this.layout);
    let text = this.texts.get(file);
    if (text === undefined) {
      try {
        text = await fs.readFile(file, 'utf8');
      } catch {
        throw new Error(out.missing);
      }
    }
    let value: T;
    try {
      value = JSON.parse(text) as T;
    } catch {
      throw new Error(out.missing);
    }
    out.check(value, this.asOf);
    return value;
  }
}
