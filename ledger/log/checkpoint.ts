// Checkpoints keep recovery fast: the state as of record `seq`, plus the log location right after
// it. Recovery still verifies every record's checksum, but parses and replays only the records
// after the checkpoint. Written with write-temp, fsync, rename, and only once every record it
// covers is durable; a checkpoint that fails to load is ignored (full replay), never trusted.
import fs from 'node:fs/promises';
import path from 'node:path';
import { writeFileAtomic } from '../../core/infra/durable-fs.ts';
import type { Location } from './record-log.ts';
import { LedgerState, LocationList, type Account, type ApiKey, type Hold, type IdempotencyEntry } from './state.ts';

// 2: account and hold money fields named with their unit (balanceMicro, heldMicro, amountMicro); a
// version-1 checkpoint is not read, and recovery replays the whole log instead, as for any unreadable one.
const VERSION = 2;
const CHECKPOINT_FILE = 'checkpoint.json';

interface CheckpointFile {
  version: number;
  seq: number;
  /** First location not covered by this checkpoint. */
  location: Location;
  accounts: Account[];
  keys: ApiKey[];
  holds: Hold[];
  idempotency: Array<[string, IdempotencyEntry]>;
  /** Location lists as base64 of little-endian float64s: compact and fast to load. */
  usageByAccount: Array<[string, string]>;
  usageByKey: Array<[string, string]>;
}

const encodeList = (l: LocationList) => {
  const f = l.toFloat64();
  return Buffer.from(f.buffer, f.byteOffset, f.byteLength).toString('base64');
};
function decodeList(b64: string): LocationList {
  const buf = Buffer.from(b64, 'base64');
  // Copy into an aligned buffer (a Buffer's byteOffset need not be a multiple of 8).
  const bytes = new Uint8Array(buf.length);
  bytes.set(buf);
  return LocationList.fromFloat64(new Float64Array(bytes.buffer));
}

/** Serialise synchronously, so the snapshot is exactly the state after `seq`. */
export function snapshot(state: LedgerState, location: Location, idempotencyCutoff: string): string {
  const file: CheckpointFile = {
    version: VERSION,
    seq: state.lastSeq,
    location,
    accounts: [...state.accounts.values()],
    keys: [...state.keys.values()],
    holds: [...state.holds.values()],
    idempotency: [...state.idempotency].filter(([, e]) => e.at >= idempotencyCutoff),
    usageByAccount: [...state.usageByAccount].map(([k, l]) => [k, encodeList(l)]),
    usageByKey: [...state.usageByKey].map(([k, l]) => [k, encodeList(l)]),
  };
  return JSON.stringify(file);
}

export async function writeCheckpoint(dir: string, json: string): Promise<void> {
  await writeFileAtomic(path.join(dir, CHECKPOINT_FILE), json);
}

export async function loadCheckpoint(dir: string): Promise<{ state: LedgerState; location: Location } | { error: string } | null> {
  let text: string;
  try {
    text = await fs.readFile(path.join(dir, CHECKPOINT_FILE), 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    return { error: (err as Error).message };
  }
  try {
    const f = JSON.parse(text) as CheckpointFile;
    if (f.version !== VERSION) return { error: `checkpoint version ${f.version}` };
    const s = new LedgerState();
    s.lastSeq = f.seq;
    for (const a of f.accounts) s.accounts.set(a.id, { ...a });
    for (const k of f.keys) {
      s.keys.set(k.id, { ...k });
      s.keysByHash.set(k.hash, s.keys.get(k.id)!);
    }
    for (const h of f.holds) s.holds.set(h.id, { ...h });
    for (const [k, e] of f.idempotency) s.idempotency.set(k, e);
    for (const [k, b] of f.usageByAccount) s.usageByAccount.set(k, decodeList(b));
    for (const [k, b] of f.usageByKey) s.usageByKey.set(k, decodeList(b));
    return { state: s, location: f.location };
  } catch (err) {
    return { error: `unreadable checkpoint: ${(err as Error).message}` };
  }
}
