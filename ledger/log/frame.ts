// Record framing on disk: [u32 flags|length][u32 CRC-32 of payload][payload], little-endian.
// The length lets recovery walk records without parsing them; the checksum tells a torn or
// corrupted record from a good one. The length word's high bit marks the last frame of a
// group-commit batch: batch N+1 is written only after batch N's fdatasync returned, so recovery
// can tell a write torn by a crash (inside the final batch) from corruption (anywhere earlier).
import { crc32 } from 'node:zlib';

const HEADER_BYTES = 8;
const BATCH_END = 0x80000000;
/** A record longer than this is corruption, not data (the largest real record is well below). */
const MAX_PAYLOAD = 64 * 1024 * 1024;

export function encodeFrame(payload: Buffer): Buffer {
  if (payload.length > MAX_PAYLOAD) throw new Error(`ledger record of ${payload.length} bytes exceeds ${MAX_PAYLOAD}`);
  const out = Buffer.allocUnsafe(HEADER_BYTES + payload.length);
  out.writeUInt32LE(payload.length, 0);
  out.writeUInt32LE(crc32(payload), 4);
  payload.copy(out, HEADER_BYTES);
  return out;
}

/** Payload length from a frame header (the batch-end flag masked off). */
export function frameLength(header: Buffer): number {
  return (header.readUInt32LE(0) & ~BATCH_END) >>> 0;
}

/** Mark an encoded frame as the last of its batch (the CRC covers the payload only). */
export function markBatchEnd(frame: Buffer): void {
  frame.writeUInt32LE((frame.readUInt32LE(0) | BATCH_END) >>> 0, 0);
}

type FrameScan = { kind: 'record'; payload: Buffer; next: number; batchEnd: boolean } | { kind: 'end' } | { kind: 'bad'; why: string };

/** Read the frame at `offset` of `buf` (a whole log file). */
export function scanFrame(buf: Buffer, offset: number): FrameScan {
  if (offset === buf.length) return { kind: 'end' };
  if (buf.length - offset < HEADER_BYTES) return { kind: 'bad', why: 'truncated record header' };
  const word = buf.readUInt32LE(offset);
  const len = (word & ~BATCH_END) >>> 0;
  const crc = buf.readUInt32LE(offset + 4);
  if (len === 0 || len > MAX_PAYLOAD) return { kind: 'bad', why: `implausible record length ${len}` };
  const end = offset + HEADER_BYTES + len;
  if (end > buf.length) return { kind: 'bad', why: 'truncated record' };
  const payload = buf.subarray(offset + HEADER_BYTES, end);
  if (crc32(payload) !== crc) return { kind: 'bad', why: 'checksum mismatch' };
  return { kind: 'record', payload, next: end, batchEnd: (word & BATCH_END) !== 0 };
}

/** The first well-formed frame at or after `from`, found byte by byte (recovery's slow path). */
function findFrame(buf: Buffer, from: number, batchEndOnly: boolean): { offset: number; next: number } | null {
  for (let o = from; o + HEADER_BYTES < buf.length; o++) {
    const f = scanFrame(buf, o);
    if (f.kind === 'record' && (!batchEndOnly || f.batchEnd)) return { offset: o, next: f.next };
  }
  return null;
}

/**
 * A bad frame at `offset` in the last log file is a torn write when it lies in the final batch:
 * no batch-end marker follows it, or one does but nothing valid follows that marker. Otherwise a
 * later batch was written after this one was fsynced, so the bad frame is corruption.
 */
export function isTornTail(buf: Buffer, offset: number): boolean {
  const end = findFrame(buf, offset + 1, true);
  if (!end) return true;
  return findFrame(buf, end.next, false) === null;
}
