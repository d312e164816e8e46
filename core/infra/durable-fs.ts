// Small durability primitives. A rename is only durable once the directory holding it is
// fsynced, and a file's bytes only once the file is; every "atomic switch" in the project is
// built from these three steps.
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';

export async function fsyncPath(p: string): Promise<void> {
  const fh = await fs.open(p, 'r');
  try {
    await fh.sync();
  } finally {
    await fh.close();
  }
}

/** fsync a directory so entries created or renamed in it survive a power cut. */
export const fsyncDir = fsyncPath;

/** Write `tmp` by `fill`, then rename it over `file` and make the rename durable. */
async function replaceAtomically(file: string, fill: (tmp: string) => Promise<void>): Promise<void> {
  const dir = path.dirname(file);
  const tmp = path.join(dir, `.tmp-${path.basename(file)}-${process.pid}-${Date.now()}`);
  await fill(tmp);
  await fs.rename(tmp, file);
  await fsyncDir(dir);
}

/** Write (flag 'w') or append ('a') `data` to `file` and fsync it. */
async function writeSynced(file: string, data: string | Uint8Array, flag: 'w' | 'a', mode?: number): Promise<void> {
  const fh = await fs.open(file, flag, mode);
  try {
    await fh.writeFile(data);
    await fh.sync();
  } finally {
    await fh.close();
  }
}

/**
 * Write a file so that readers see either the old content or the new, never a mix. `mode` is set
 * when the file is created, so a secret is never readable by others, not even for a moment.
 */
export async function writeFileAtomic(file: string, data: string | Uint8Array, mode = 0o666): Promise<void> {
  await replaceAtomically(file, (tmp) => writeSynced(tmp, data, 'w', mode));
}

/**
 * writeFileAtomic of `prefix`'s bytes followed by `data`: the prefix is copied by the kernel
 * (copy_file_range), never through this process's memory, which makes appending to a large file
 * several times cheaper than reading and rewriting it.
 */
export async function writeFileAtomicAfter(file: string, prefix: string, data: Uint8Array): Promise<void> {
  await replaceAtomically(file, async (tmp) => {
    await fs.copyFile(prefix, tmp);
    await writeSynced(tmp, data, 'a');
  });
}

export async function sha256File(file: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(file, { highWaterMark: 1 << 20 })) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/** fsync every file below dir, then every directory bottom-up. */
export async function fsyncTree(dir: string): Promise<void> {
  const entries = await fs.readdir(dir, { withFileTypes: true });
  for (const e of entries) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) await fsyncTree(p);
    else if (e.isFile()) await fsyncPath(p);
  }
  await fsyncDir(dir);
}

/** Whether a path exists (any kind of file). */
export async function pathExists(p: string): Promise<boolean> {
  return fs.access(p).then(
    () => true,
    () => false,
  );
}
