// A post's media as its snapshot row holds them (posts.parquet `media`: kind, a path relative to
// DATA_DIR or a remote url, and a video's frames), read on demand: the media lists are not kept in
// the server's heap with the other columns (a million posts' lists would cost more than every
// thumbnail asked for). On a generation's first media read, the rows that have media are copied
// into a table of the process's own in-memory DuckDB (compressed, sorted by row_id): a look-up is
// then under a millisecond, where reading posts.parquet again cost 13-18 ms a post at 100k posts.
// Queries run one at a time; the tables of the last two generations are kept; recent answers too.
import path from 'node:path';
import { LRUCache } from 'lru-cache';
import { openDuckDB, sqlString, type DuckDB } from '../../core/infra/duckdb.ts';

export interface MediaEntry {
  kind: 'image' | 'video';
  /** Relative to DATA_DIR; null for remote media. */
  path: string | null;
  url: string | null;
  frames: string[];
}

/** Generations whose media tables are kept. */
const TABLES_KEPT = 2;

/** The media lists of posts, for one server: its DuckDB opened on first use, closed with the server. */
export class MediaEntries {
  private db: Promise<DuckDB> | null = null;
  private queue: Promise<unknown> = Promise.resolve();
  private readonly cache = new LRUCache<string, MediaEntry[]>({ max: 20_000 });
  /** The media table of each generation directory, oldest first. */
  private readonly tables = new Map<string, string>();
  private made = 0;

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
    const rows = await this.serially(async () =>
      conn.all(`SELECT media FROM ${await this.tableOf(conn, genDir)} WHERE row_id = $1`, [row]),
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

  /** The generation's media table, made on first use (inside serially). */
  private async tableOf(conn: DuckDB, genDir: string): Promise<string> {
    const known = this.tables.get(genDir);
    if (known) return known;
    const table = `media_${this.made++}`;
    const file = sqlString(path.join(genDir, 'posts.parquet'));
    await conn.run(
      `CREATE TABLE ${table} AS SELECT row_id, to_json(media)::VARCHAR AS media FROM read_parquet(${file}) WHERE len(media) > 0 ORDER BY row_id`,
    );
    this.tables.set(genDir, table);
    for (const [dir, old] of this.tables) {
      if (this.tables.size <= TABLES_KEPT) break;
      this.tables.delete(dir);
      await conn.run(`DROP TABLE ${old}`);
    }
    return table;
  }

  async close(): Promise<void> {
    const open = this.db;
    this.db = null;
    if (open) (await open).close();
  }
}
