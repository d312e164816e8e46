// Finds landing files not yet ingested. Identity is the sha256 of the bytes, not the name: a file
// copied in twice, or renamed, is not ingested twice. Dot-files and *.tmp / *.part are skipped so
// an upstream writer can write-then-rename without us reading half a file.
import fs from 'node:fs/promises';
import path from 'node:path';
import type { DataDirLayout } from '../../core/data-dir.ts';
import { sha256File } from '../../core/durable-fs.ts';
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

export async function discoverLandingFiles(layout: DataDirLayout, known: Set<string>): Promise<{ fresh: LandingFile[]; skipped: number }> {
  const all: string[] = [];
  await walk(layout.landing, all);
  // Name order is the ingest order: later files' observations win ties, so it must be stable.
  all.sort();
  const fresh: LandingFile[] = [];
  const seen = new Set<string>();
  let skipped = 0;
  for (const p of all) {
    const format = formatOf(p);
    if (!format) continue; // media and other files are referenced by records, not ingested
    const sha256 = await sha256File(p);
    if (known.has(sha256) || seen.has(sha256)) {
      skipped++;
      continue;
    }
    seen.add(sha256);
    const st = await fs.stat(p);
    fresh.push({ path: p, rel: path.relative(layout.landing, p).split(path.sep).join('/'), format, bytes: st.size, sha256 });
  }
  return { fresh, skipped };
}
