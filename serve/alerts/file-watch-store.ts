// The watches on disk (one process, no DATABASE_URL): one JSON file per watch under
// DATA_DIR/alerts/watches/, each written whole (temp file, fsync, rename, fsync of the folder), so a
// crash leaves a watch as it was or as it became, never half written. All are held in memory: the
// process is the only writer, and the per-account bound is checked and the watch indexed before
// anything is awaited, so concurrent creates cannot pass it together.
import fs from 'node:fs/promises';
import path from 'node:path';
import { fsyncDir, writeFileAtomic } from '../../core/infra/durable-fs.ts';
import type { Watch } from './alert-model.ts';
import type { WatchStore } from './watch-store.ts';

const FILE_RE = /^(alw_[A-Za-z0-9_-]+)\.json$/;

export class FileWatchStore implements WatchStore {
  private readonly watches = new Map<string, Watch>();
  private readonly dir: string;

  constructor(
    alertsDir: string,
    private readonly onUnreadable: (file: string) => void = () => undefined,
  ) {
    this.dir = path.join(alertsDir, 'watches');
  }

  async open(): Promise<void> {
    await fs.mkdir(this.dir, { recursive: true });
    for (const f of await fs.readdir(this.dir)) {
      if (!FILE_RE.test(f)) continue;
      try {
        const w = JSON.parse(await fs.readFile(path.join(this.dir, f), 'utf8')) as Watch;
        this.watches.set(w.id, w);
      } catch {
        // Written atomically: only damage from outside the service gets here.
        this.onUnreadable(f);
      }
    }
  }

  private file(id: string): string {
    return path.join(this.dir, `${id}.json`);
  }

  async add(watch: Watch, perAccount: number): Promise<boolean> {
    let n = 0;
    for (const w of this.watches.values()) if (w.account === watch.account) n++;
    if (n >= perAccount) return false;
    this.watches.set(watch.id, watch);
    try {
      await writeFileAtomic(this.file(watch.id), JSON.stringify(watch));
    } catch (err) {
      this.watches.delete(watch.id);
      throw err;
    }
    return true;
  }

  async get(id: string): Promise<Watch | null> {
    return this.watches.get(id) ?? null;
  }

  async list(account: string): Promise<Watch[]> {
    return [...this.watches.values()].filter((w) => w.account === account).sort(byCreation);
  }

  async all(): Promise<Watch[]> {
    return [...this.watches.values()].sort(byCreation);
  }

  async remove(id: string): Promise<boolean> {
    if (!this.watches.delete(id)) return false;
    await fs.rm(this.file(id), { force: true });
    await fsyncDir(this.dir);
    return true;
  }

  async setPaused(id: string, paused: Watch['paused']): Promise<void> {
    const w = this.watches.get(id);
    if (!w) return;
    const next = { ...w, paused };
    this.watches.set(id, next);
    await writeFileAtomic(this.file(id), JSON.stringify(next));
  }

  async countByState(): Promise<{ active: number; paused: number }> {
    let paused = 0;
    for (const w of this.watches.values()) if (w.paused) paused++;
    return { active: this.watches.size - paused, paused };
  }

  async close(): Promise<void> {}
}

/** Oldest first, ties by id: the order GET /alerts lists them in. */
function byCreation(a: Watch, b: Watch): number {
  return a.created_at < b.created_at ? -1 : a.created_at > b.created_at ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}
