// A post's media as its snapshot row holds them (posts.parquet `media`: kind, a path relative to
// DATA_DIR or a remote url, and a video's frames), read on demand: the media lists are not kept in
// memory with the other columns (a million posts' lists would cost more than every thumbnail
// asked for). One DuckDB for the process, its queries one at a time; row_id is sorted in the file,
// so a look-up reads one row group. Recent answers are kept.
import path from 'node:path';
import { LRUCache } from 'lru-cache';
import { openDuckDB, sqlString, type DuckDB } from '../../core/duckdb.ts';

export interface MediaEntry {
  kind: 'image' | 'video';
  /** Relative to DATA_DIR; null for remote media. */
  path: string | null;
  url: string | null;
  frames: string[];
}

/** The media lists of posts, for one server: its DuckDB opened on first use, closed with the server. */
export class MediaEntries {
  private db: Promise<DuckDB> | null = null;
  private queue: Promise<unknown> = Promise.resolve();
  private readonly cache = new LRUCache<string, MediaEntry[]>({ max: 20_000 });

  private serially<T>(work: () => Promise<T>): Promise<T> {
    const next = this.queue.then(work, work);
    this.queue = next.catch(() => undefined);
    return next;
  }

  /** The media of `row` in the generation at `genDir` ([] for a post without any). */
  async of(genDir: string, row: number): Promise<MediaEntry[]> {
    const key = `${genDir}\0${row}`;
    const hit = this.cache.get(key);
    if (hit) return hit;
    this.db ??= openDuckDB(':memory:', { threads: 1 });
    const conn = await this.db;
    const file = sqlString(path.join(genDir, 'posts.parquet'));
    const rows = await this.serially(() =>
      conn.all(`SELECT to_json(media)::VARCHAR AS media FROM read_parquet(${file}) WHERE row_id = $1`, [row]),
    );
    const raw = rows[0]?.media as string | null | undefined;
    const list = raw ? (JSON.parse(raw) as Array<Partial<MediaEntry>> | null) : null;
    const entries: MediaEntry[] = (list ?? []).map((m) => ({
      kind: m.kind === 'video' ? 'video' : 'image',
      path: m.path ?? null,
      url: m.url ?? null,
      frames: m.frames ?? [],
    }));
    this.cache.set(key, entries);
    return entries;
  }

  async close(): Promise<void> {
    const open = this.db;
    this.db = null;
    if (open) (await open).close();
  }
}
