// An exclusive, cross-process lock file: one pipeline run at a time per data directory, one
// writer of the ledger. The file is created with O_EXCL and names its owner's pid; a lock whose
// owner is gone (kill -9) is stale and taken over, so a crash never wedges anything.
import fs from 'node:fs/promises';
import path from 'node:path';

export interface Lock {
  release(): Promise<void>;
}

export class LockHeld extends Error {
  constructor(
    readonly owner: { pid: number; since: string },
    what = 'another process holds the lock',
  ) {
    super(`${what} (pid ${owner.pid}, since ${owner.since})`);
  }
}

/** Whether a process with this pid exists (EPERM: it exists, owned by someone else). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

// Locks this process holds: a lock file naming our own pid is held by us only if it is in here
// (otherwise it was left by an earlier process that happened to have our pid).
const heldHere = new Set<string>();

export async function acquireLock(file: string): Promise<Lock> {
  await fs.mkdir(path.dirname(file), { recursive: true });
  const body = JSON.stringify({ pid: process.pid, since: new Date().toISOString() });
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fh = await fs.open(file, 'wx');
      await fh.writeFile(body);
      await fh.sync();
      await fh.close();
      heldHere.add(file);
      return {
        release: async () => {
          heldHere.delete(file);
          await fs.rm(file, { force: true });
        },
      };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    let owner: { pid: number; since: string } = { pid: 0, since: '?' };
    try {
      owner = JSON.parse(await fs.readFile(file, 'utf8'));
    } catch {
      // Torn lock file from a crash between create and write: treat as stale.
    }
    const ours = owner.pid === process.pid;
    if ((ours && heldHere.has(file)) || (!ours && owner.pid && processAlive(owner.pid))) throw new LockHeld(owner);
    // Stale: move it aside atomically so two contenders cannot both delete a fresh lock.
    await fs.rename(file, `${file}.stale-${process.pid}`).catch(() => {});
    await fs.rm(`${file}.stale-${process.pid}`, { force: true });
  }
  throw new Error(`could not acquire lock ${file}`);
}
