// The append-only log: numbered segment files of framed records under DATA_DIR/ledger/.
//
// Group commit: appends queue up while a write+fdatasync is in flight; the next flush writes
// everything queued with one writev and one fdatasync, and every append's promise resolves only
// after the fdatasync that covers it. Under load one fsync serves hundreds of operations; alone,
// an operation pays one fsync.
//
// A record's location (segment, offset) is fixed when it is queued, so callers can index it at
// once. Recovery walks every frame: a bad frame inside the final batch of the last segment is a
// write cut by a crash (never acknowledged) and is cut off; a bad frame anywhere else is
// corruption and stops the open with the file and offset. A segment is fsynced before the next
// one is created, so only the last segment can hold a torn write.
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { fsyncDir } from '../core/infra/durable-fs.ts';
import { encodeFrame, frameLength, isTornTail, markBatchEnd, scanFrame } from './frame.ts';

const SEG_RE = /^seg-(\d{8})\.log$/;
const segName = (n: number) => `seg-${String(n).padStart(8, '0')}.log`;

/** Segment number and byte offset, packed into one safe integer: segment * 2^32 + offset. */
export type Location = number;
export const packLocation = (segment: number, offset: number): Location => segment * 2 ** 32 + offset;
export const unpackLocation = (loc: Location) => ({ segment: Math.floor(loc / 2 ** 32), offset: loc % 2 ** 32 });

export class LedgerCorruption extends Error {
  constructor(
    readonly file: string,
    readonly offset: number,
    why: string,
  ) {
    super(
      `ledger corrupted: ${path.basename(file)} at byte ${offset}: ${why}; refusing to start ` +
        `(money is never skipped). Restore the file or contact an operator.`,
    );
  }
}

export interface TornTail {
  file: string;
  offset: number;
  bytesCut: number;
}

export interface RecoveredRecord {
  payload: Buffer;
  location: Location;
}

export interface OpenedLog {
  log: SegmentLog;
  records: RecoveredRecord[];
  tornTail: TornTail | null;
}

interface Pending {
  frame: Buffer;
  segment: number;
  location: Location;
  resolve: () => void;
  reject: (err: Error) => void;
}

export interface SegmentLogOptions {
  /** Rotate to a new segment once the current one reaches this size. */
  segmentBytes?: number;
  /** false: one fdatasync per append, no batching (the baseline the benchmark compares against). */
  groupCommit?: boolean;
}

export class SegmentLog {
  private queue: Pending[] = [];
  private lastQueued: Promise<void> = Promise.resolve();
  /** Frames queued but not yet written, by location, so reads never see a hole. */
  private unwritten = new Map<Location, Buffer>();
  private flushing: Promise<void> | null = null;
  private failed: Error | null = null;
  private fds = new Map<number, number>();
  /** Next free offset per segment, counting queued (not yet written) frames. */
  private assignedSegment: number;
  private assignedOffset: number;
  private writtenSegment: number;
  private writtenOffset: number;
  private readonly segmentBytes: number;
  private readonly groupCommit: boolean;

  private constructor(
    readonly dir: string,
    segment: number,
    size: number,
    opts: SegmentLogOptions,
  ) {
    this.assignedSegment = segment;
    this.assignedOffset = size;
    this.writtenSegment = segment;
    this.writtenOffset = size;
    this.segmentBytes = opts.segmentBytes ?? 64 * 1024 * 1024;
    this.groupCommit = opts.groupCommit ?? true;
  }

  /** Open (creating if needed), verify every record, cut a torn tail, return all records in order. */
  static async open(dir: string, opts: SegmentLogOptions = {}, fromLocation: Location = 0): Promise<OpenedLog> {
    await fsp.mkdir(dir, { recursive: true });
    const segments = (await fsp.readdir(dir))
      .filter((n) => SEG_RE.test(n))
      .map((n) => Number(SEG_RE.exec(n)![1]))
      .sort((a, b) => a - b);
    if (segments.length === 0) {
      const fh = await fsp.open(path.join(dir, segName(1)), 'wx');
      await fh.close();
      await fsyncDir(dir);
      segments.push(1);
    }
    const from = unpackLocation(fromLocation);
    const records: RecoveredRecord[] = [];
    let tornTail: TornTail | null = null;
    let lastSize = 0;
    for (const [i, seg] of segments.entries()) {
      const file = path.join(dir, segName(seg));
      const buf = await fsp.readFile(file);
      const last = i === segments.length - 1;
      let offset = 0;
      for (;;) {
        const f = scanFrame(buf, offset);
        if (f.kind === 'end') break;
        if (f.kind === 'record') {
          // Records before the checkpoint are verified (checksum) but not handed back for replay.
          if (seg > from.segment || (seg === from.segment && offset >= from.offset)) {
            records.push({ payload: f.payload, location: packLocation(seg, offset) });
          }
          offset = f.next;
          continue;
        }
        if (!last || !isTornTail(buf, offset)) throw new LedgerCorruption(file, offset, f.why);
        await truncate(file, offset);
        tornTail = { file, offset, bytesCut: buf.length - offset };
        break;
      }
      if (last) lastSize = tornTail ? tornTail.offset : buf.length;
    }
    const log = new SegmentLog(dir, segments[segments.length - 1]!, lastSize, opts);
    return { log, records, tornTail };
  }

  /**
   * Queue a record. `beforeQueue` runs with the record's location first; if it throws, nothing is
   * queued. `durable` resolves after the fdatasync covering the record.
   */
  append(payload: Buffer, beforeQueue?: (location: Location) => void): { location: Location; durable: Promise<void> } {
    if (this.failed) throw this.failed;
    const frame = encodeFrame(payload);
    let segment = this.assignedSegment;
    let offset = this.assignedOffset;
    if (offset > 0 && offset + frame.length > this.segmentBytes) {
      segment++;
      offset = 0;
    }
    const location = packLocation(segment, offset);
    beforeQueue?.(location);
    this.assignedSegment = segment;
    this.assignedOffset = offset + frame.length;
    let resolve!: () => void;
    let reject!: (e: Error) => void;
    const durable = new Promise<void>((res, rej) => ((resolve = res), (reject = rej)));
    this.queue.push({ frame, segment, location, resolve, reject });
    this.unwritten.set(location, frame);
    this.lastQueued = durable;
    if (!this.flushing) this.flushing = this.flushLoop();
    return { location, durable };
  }

  /** The location the next record will get (a checkpoint covers everything before it). */
  nextLocation(): Location {
    return packLocation(this.assignedSegment, this.assignedOffset);
  }

  /** Resolves once every record queued so far is durable (records queued later need not be). */
  async durableNow(): Promise<void> {
    await this.lastQueued;
  }

  /** Resolves when the queue is empty and everything is durable. */
  async drain(): Promise<void> {
    while (this.flushing) await this.flushing;
    if (this.failed) throw this.failed;
  }

  /** Read one record back (usage listings, idempotent replays); queued ones come from memory. */
  read(location: Location): Buffer {
    const queued = this.unwritten.get(location);
    if (queued) return queued.subarray(8);
    const { segment, offset } = unpackLocation(location);
    const fd = this.fdFor(segment);
    const head = Buffer.alloc(8);
    fs.readSync(fd, head, 0, 8, offset);
    const len = frameLength(head);
    const payload = Buffer.alloc(len);
    fs.readSync(fd, payload, 0, len, offset + 8);
    return payload;
  }

  async close(): Promise<void> {
    await this.drain().catch(() => {});
    for (const fd of this.fds.values()) fs.closeSync(fd);
    this.fds.clear();
  }

  private fdFor(segment: number): number {
    let fd = this.fds.get(segment);
    if (fd === undefined) {
      const file = path.join(this.dir, segName(segment));
      fd = fs.openSync(file, fs.existsSync(file) ? 'r+' : 'w+');
      this.fds.set(segment, fd);
    }
    return fd;
  }

  private async flushLoop(): Promise<void> {
    try {
      while (this.queue.length > 0) {
        const batch = this.groupCommit ? this.queue.splice(0) : this.queue.splice(0, 1);
        try {
          await this.writeBatch(batch);
        } catch (err) {
          // Memory may now be ahead of disk: refuse everything from here on; a restart recovers
          // from the log, which is the truth.
          this.failed = new Error(`ledger write failed, ledger stopped: ${(err as Error).message}`);
          for (const p of [...batch, ...this.queue.splice(0)]) p.reject(this.failed);
          return;
        }
        for (const p of batch) {
          this.unwritten.delete(p.location);
          p.resolve();
        }
      }
    } finally {
      this.flushing = null;
    }
  }

  private async writeBatch(batch: Pending[]): Promise<void> {
    // A batch may straddle a rotation: each segment's part is written and synced in order, and a
    // new segment's directory entry is made durable before any record goes into it.
    let i = 0;
    while (i < batch.length) {
      const segment = batch[i]!.segment;
      let j = i;
      while (j < batch.length && batch[j]!.segment === segment) j++;
      if (segment !== this.writtenSegment) {
        this.fdFor(segment);
        await fsyncDir(this.dir);
        this.writtenSegment = segment;
        this.writtenOffset = 0;
      }
      const fd = this.fdFor(segment);
      const bufs = batch.slice(i, j).map((p) => p.frame);
      markBatchEnd(bufs[bufs.length - 1]!);
      const bytes = bufs.reduce((a, b) => a + b.length, 0);
      await new Promise<void>((res, rej) =>
        fs.writev(fd, bufs, this.writtenOffset, (e, n) => (e ? rej(e) : n !== bytes ? rej(new Error(`short write ${n}/${bytes}`)) : res())),
      );
      await new Promise<void>((res, rej) => fs.fdatasync(fd, (e) => (e ? rej(e) : res())));
      this.writtenOffset += bytes;
      i = j;
    }
  }
}

async function truncate(file: string, size: number): Promise<void> {
  const fh = await fsp.open(file, 'r+');
  try {
    await fh.truncate(size);
    await fh.sync();
  } finally {
    await fh.close();
  }
}
