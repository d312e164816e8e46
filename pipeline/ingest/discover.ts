// Finds landing files not yet ingested. Identity is the sha256 of the bytes, not the name: a file
// copied in twice, or renamed, is not ingested twice. Dot-files and *.tmp / *.part are skipped so
// an upstream writer can write-then-rename without us reading half a file.
//
// Hashing every landing file on every run made a run's cost follow the corpus (a million posts'
// files, hashed hourly). As git's index does, a file's sha256 is kept with the size and mtime it was
// hashed at (landing_hashes), and a file whose path, size and mtime are unchanged is not read again.
// A file changed within a second before it was hashed could change again without its mtime moving
// on a coarse clock, so such an entry is never trusted (git's "racy" rule): the file is hashed anew.
import fs from 'node:fs/promises';
import path from 'node:path';
import type { DataDirLayout } from '../../core/infra/data-dir.ts';
import { sha256File } from '../../core/infra/durable-fs.ts';
import { formatOf, type LandingFormat } from './read-records.ts';

export interface LandingFile {
  path: string;
  /** Path relative to the landing directory, with forward slashes. */
  rel: string;
  format: LandingFormat;
  bytes: number;
  sha256: string;
}

async function walk(dir: string, out: string[]): Promise<void> {
  let entries;
  try {
    entries = await fs.readdir(dir, { withFileTypes: true });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw err;
  }
  for (const e of entries) {
    if (e.name.startsWith('.')) continue;
    const p = path.join(dir, e.name);
    if (e.isDirectory()) await walk(p, out);
    else if (e.isFile() && !/\.(tmp|part)$/i.test(e.name)) out.push(p);
  }
}

/** A file's hash as last computed (landing_hashes). */
interface KnownHash {
  bytes: number;
  mtimeMs: number;
  sha256: string;
  hashedAtMs: number;
}

/** An mtime within this of the hashing leaves the hash untrusted. */
const RACY_MS = 1000;

export async function discoverLandingFiles(
  layout: DataDirLayout,
  known: Set<string>,
  hashes: ReadonlyMap<string, KnownHash> = new Map(),
): Promise<{ fresh: LandingFile[]; skipped: number; hashed: Array<{ rel: string } & KnownHash> }> {
  const all: string[] = [];
  await walk(layout.landing, all);
  // Name order is the ingest order: later files' observations win ties, so it must be stable.
  all.sort();
  const fresh: LandingFile[] = [];
  const seen = new Set<string>();
  const hashed: Array<{ rel: string } & KnownHash> = [];
  let skipped = 0;
  for (const p of all) {
    const format = formatOf(p);
    if (!format) continue; // media and other files are referenced by records, not ingested
    const rel = path.relative(layout.landing, p).split(path.sep).join('/');
    const st = await fs.stat(p);
    const h = hashes.get(rel);
    let sha256: string;
    if (h && h.bytes === st.size && h.mtimeMs === st.mtimeMs && st.mtimeMs < h.hashedAtMs - RACY_MS) sha256 = h.sha256;
    else {
      const hashedAtMs = Date.now();
      sha256 = await sha256File(p);
      // Hashed from a file that changed meanwhile: not remembered (the next run hashes it again).
      const after = await fs.stat(p);
      if (after.size === st.size && after.mtimeMs === st.mtimeMs)
        hashed.push({ rel, bytes: st.size, mtimeMs: st.mtimeMs, sha256, hashedAtMs });
    }
    if (known.has(sha256) || seen.has(sha256)) {
      skipped++;
      continue;
    }
    seen.add(sha256);
    fresh.push({ path: p, rel, format, bytes: st.size, sha256 });
  }
  return { fresh, skipped, hashed };
}
