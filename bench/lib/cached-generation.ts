// Whether a cached bench data directory's served generation has this code's snapshot layout: a
// cache built before a layout change (e.g. schema 1, before time segments) must be rebuilt, or
// the server and the ranking core would refuse it.
import fs from 'node:fs';
import path from 'node:path';
import { SNAPSHOT_SCHEMA_VERSION } from '../../core/snapshots/generations.ts';

export function hasCurrentLayout(dataDir: string): boolean {
  try {
    const gen = fs.readFileSync(path.join(dataDir, 'snapshots', 'CURRENT'), 'utf8').trim();
    const m = JSON.parse(fs.readFileSync(path.join(dataDir, 'snapshots', gen, 'manifest.json'), 'utf8')) as { schema_version: number };
    return m.schema_version === SNAPSHOT_SCHEMA_VERSION;
  } catch {
    return false;
  }
}
