// The append-only log: numbered log files (seg-NNNNNNNN.log, the on-disk name kept) of framed records under DATA_DIR/ledger/.
//
// Group commit: appends queue up while a write+fdatasync is in flight; the next flush writes
// everything queued with one writev and one fdatasync, and every append's promise resolves only
// after the fdatasync that covers it. Under load one fsync serves hundreds of operations; alone,
// an operation pays one fsync.
//
// A record's location (log file, offset) is fixed when it is queued, so callers can index it at
// once. Recovery walks every frame: a bad frame inside the final batch of the last log file is a
// write cut by a crash (never acknowledged) and is cut off; a bad frame anywhere else is
// corruption and stops the open with the file and offset. A log file is fsynced before the next
// one is created, so only the last log file can hold a torn write.
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { fsyncDir } from '../../core/infra/durable-fs.ts';
import { encodeFrame, frameLength, isTornTail, markBatchEnd, scanFrame } from './frame.ts';

const LOG_FILE_RE = /^seg-(\d{8})\.log$/;
const logFileName = (n: number) => `seg-${String(n).padStart(8, '0')}.log`;

/** Log file number and byte offset, packed into one safe integer: fileNo * 2^32 + offset. */
export type Location = number;
const packLocation = (fileNo: number, offset: number): Location => fileNo * 2 ** 32 + offset;
const unpackLocation = (loc: Location) => ({ fileNo: Math.floor(loc / 2 ** 32), offset: loc % 2 ** 32 });

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

interface RecoveredRecord {
  payload: Buffer;
  location: Location;
}

interface OpenedLog {
  log: RecordLog;
  records: RecoveredRecord[];
  tornTail: TornTail | null;
}

interface Pending {
  frame: Buffer;
  fileNo: number;
  location: Location;
  resolve: () => void;
  reject: (err: Error) => void;
}

interface RecordLogOptions {
  /** Rotate to a new log file once the current one reaches this size. */
  fileBytes?: number;
  /** false: one fdatasync per append, no batching (the baseline the benchmark compares against). */
  groupCommit?: boolean;
}

export class RecordLog {
  private queue: Pending[] = [];
  private lastQueued: Promise<void> = Promise.resolve();
  /** Frames queued but not yet written, by location, so reads never see a hole. */
  private unwritten = new Map<Location, Buffer>();
  private flushing: Promise<void> | null = null;
  private failed: Error | null = null;
  private fds = new Map<number, number>();
  /** Next free offset per log file, counting queued (not yet written) frames. */
  private assignedFile: number;
  private assignedOffset: number;
  private writtenFile: number;
  private writtenOffset: number;
  private readonly fileBytes: number;
  private readonly groupCommit: boolean;

  private constructor(
    readonly dir: string,
    fileNo: number,
    size: number,
    opts: RecordLogOptions,
  ) {
    this.assignedFile = fileNo;
    this.assignedOffset = size;
    this.writtenFile = fileNo;
    this.writtenOffset = size;
    this.fileBytes = opts.fileBytes ?? 64 * 1024 * 1024;
    this.groupCommit = opts.groupCommit ?? true;
  }

  /** Open (creating if needed), verify every record, cut a torn tail, return all records in order. */
  static async open(dir: string, opts: RecordLogOptions = {}, fromLocation: Location = 0): Promise<OpenedLog> {
    await fsp.mkdir(dir, { recursive: true });
    const fileNos = (await fsp.readdir(dir))
      .filter((n) => LOG_FILE_RE.test(n))
      .map((n) => Number(LOG_FILE_RE.exec(n)![1]))
      .sort((a, b) => a - b);
    if (fileNos.length === 0) {
      const fh = await fsp.open(path.join(dir, logFileName(1)), 'wx');
      await fh.close();
      await fsyncDir(dir);
      fileNos.push(1);
    }
    const from = unpackLocation(fromLocation);
    const records: RecoveredRecord[] = [];
    let tornTail: TornTail | null = null;
    let lastSize = 0;
    for (const [i, seg] of fileNos.entries()) {
      const file = path.join(dir, logFileName(seg));
      const buf = await fsp.readFile(file);
      const last = i === fileNos.length - 1;
      let offset = 0;
      for (;;) {
        const f = scanFrame(buf, offset);
        if (f.kind === 'end') break;
        if (f.kind === 'record') {
          // Records before the checkpoint are verified (checksum) but not handed back for replay.
          if (seg > from.fileNo || (seg === from.fileNo && offset >= from.offset)) {
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
    const log = new RecordLog(dir, fileNos[fileNos.length - 1]!, lastSize, opts);
    return { log, records, tornTail };
  }

  /**
   * Queue a record. `beforeQueue` runs with the record's location first; if it throws, nothing is
   * queued. `durable` resolves after the fdatasync covering the record.
   */
  append(payload: Buffer, beforeQueue?: (location: Location) => void): { location: Location; durable: Promise<void> } {
    if (this.failed) throw this.failed;
    const frame = encodeFrame(payload);
    let fileNo = this.assignedFile;
    let offset = this.assignedOffset;
    if (offset > 0 && offset + frame.length > this.fileBytes) {
      fileNo++;
      offset = 0;
    }
    const location = packLocation(fileNo, offset);
    beforeQueue?.(location);
    this.assignedFile = fileNo;
    this.assignedOffset = offset + frame.length;
    let resolve!: () => void;
    let reject!: (e: Error) => void;
    const durable = new Promise<void>((res, rej) => ((resolve = res), (reject = rej)));
    this.queue.push({ frame, fileNo, location, resolve, reject });
    this.unwritten.set(location, frame);
    this.lastQueued = durable;
    if (!this.flushing) this.flushing = this.flushLoop();
    return { location, durable };
  }

  /** The location the next record will get (a checkpoint covers everything before it). */
  nextLocation(): Location {
    return packLocation(this.assignedFile, this.assignedOffset);
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
    const { fileNo, offset } = unpackLocation(location);
    const fd = this.fdFor(fileNo);
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

  private fdFor(fileNo: number): number {
    let fd = this.fds.get(fileNo);
    if (fd === undefined) {
      const file = path.join(this.dir, logFileName(fileNo));
      fd = fs.openSync(file, fs.existsSync(file) ? 'r+' : 'w+');
      this.fds.set(fileNo, fd);
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
    // A batch may straddle a rotation: each log file's part is written and synced in order, and a
    // new log file's directory entry is made durable before any record goes into it.
    let i = 0;
    while (i < batch.length) {
      const fileNo = batch[i]!.fileNo;
      let j = i;
      while (j < batch.length && batch[j]!.fileNo === fileNo) j++;
      if (fileNo !== this.writtenFile) {
        this.fdFor(fileNo);
        await fsyncDir(this.dir);
        this.writtenFile = fileNo;
        this.writtenOffset = 0;
      }
      const fd = this.fdFor(fileNo);
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
