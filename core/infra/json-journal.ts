// An append-only journal of JSON lines for state one process keeps in memory and must not lose
// (the webhook outbox): append() resolves once its lines are on disk (write + fdatasync), so what
// it acknowledged survives a SIGKILL or a power cut. Appends made while a write is in flight go
// together in the next one (group commit: one fdatasync for many). A crash can only cut the last
// line short; open() cuts it off. compact() replaces the whole file (atomically) with the lines of
// the live state, in order with the appends, so the file stays about the size of that state.
import fs from 'node:fs/promises';
import { fsyncDir, writeFileAtomic } from './durable-fs.ts';
import path from 'node:path';

type Op = { kind: 'append' | 'compact'; text: string; lines: number; resolve: () => void; reject: (e: Error) => void };

interface OpenedJournal<T> {
  journal: JsonJournal;
  records: T[];
  /** Lines that did not parse (skipped) and bytes of a torn last line (cut off). */
  unreadable: number;
  tornBytes: number;
}

export class JsonJournal {
  private ops: Op[] = [];
  private flushing: Promise<void> | null = null;
  private failed: Error | null = null;
  /** Lines in the file (written or queued): how much a compaction would save. */
  lines: number;

  private constructor(
    private readonly file: string,
    private fh: fs.FileHandle,
    lines: number,
  ) {
    this.lines = lines;
  }

  static async open<T>(file: string): Promise<OpenedJournal<T>> {
    await fs.mkdir(path.dirname(file), { recursive: true });
    let text = '';
    try {
      text = await fs.readFile(file, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
    const end = text.lastIndexOf('\n') + 1;
    const tornBytes = Buffer.byteLength(text.slice(end));
    const records: T[] = [];
    let unreadable = 0;
    for (const line of text.slice(0, end).split('\n')) {
      if (!line) continue;
      try {
        records.push(JSON.parse(line) as T);
      } catch {
        unreadable++;
      }
    }
    const fh = await fs.open(file, 'a');
    if (tornBytes > 0) {
      await fh.truncate(Buffer.byteLength(text.slice(0, end)));
      await fh.sync();
    } else if (text === '') await fsyncDir(path.dirname(file));
    return { journal: new JsonJournal(file, fh, records.length + unreadable), records, unreadable, tornBytes };
  }

  /** Durable once resolved. */
  append(records: unknown[]): Promise<void> {
    return this.queue('append', records);
  }

  /** Replace the file with these records (the whole live state, taken after every append queued so far). */
  compact(records: unknown[]): Promise<void> {
    return this.queue('compact', records);
  }

  async close(): Promise<void> {
    while (this.flushing) await this.flushing;
    await this.fh.close();
  }

  private queue(kind: Op['kind'], records: unknown[]): Promise<void> {
    if (this.failed) return Promise.reject(this.failed);
    const text = records.map((r) => JSON.stringify(r) + '\n').join('');
    const p = new Promise<void>((resolve, reject) => this.ops.push({ kind, text, lines: records.length, resolve, reject }));
    this.lines = kind === 'compact' ? records.length : this.lines + records.length;
    this.flushing ??= this.flushLoop();
    return p;
  }

  private async flushLoop(): Promise<void> {
    try {
      while (this.ops.length > 0) {
        // Every append up to the next compaction goes in one write and one fdatasync.
        const n = this.ops[0]!.kind === 'compact' ? 1 : this.ops.findIndex((o) => o.kind === 'compact');
        const batch = this.ops.splice(0, n < 0 ? this.ops.length : n);
        try {
          if (batch[0]!.kind === 'compact') {
            await writeFileAtomic(this.file, batch[0]!.text);
            await this.fh.close();
            this.fh = await fs.open(this.file, 'a');
          } else {
            await this.fh.write(batch.map((o) => o.text).join(''));
            await this.fh.datasync();
          }
        } catch (err) {
          // Memory may be ahead of the file now: refuse everything after; a restart replays the file.
          this.failed = new Error(`journal ${this.file} write failed: ${(err as Error).message}`);
          for (const o of [...batch, ...this.ops.splice(0)]) o.reject(this.failed);
          return;
        }
        for (const o of batch) o.resolve();
      }
    } finally {
      this.flushing = null;
    }
  }
}
