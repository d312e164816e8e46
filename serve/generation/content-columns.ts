// What a content item (docs/api.md, "Content item") shows besides its scores, for every row of a generation, held
// compactly (see core/infra/utf8-column.ts, core/infra/string-lists.ts) and read from posts.parquet once at
// load: title, description, tags, platform, content type, creator (id and handle), URL; and which narratives
// (one per window at most) and patterns (one per scope at most) the row belongs to.
import path from 'node:path';
import { openDuckDB, sqlString } from '../../core/infra/duckdb.ts';
import { toShared } from '../../core/infra/shared-array.ts';
import { StringLists, type StringListsParts } from '../../core/infra/string-lists.ts';
import { Utf8Column, type Utf8ColumnParts } from '../../core/infra/utf8-column.ts';

export interface ContentColumns {
  readonly rows: number;
  title: Utf8Column;
  description: Utf8Column;
  contentUrl: Utf8Column;
  tags: StringLists;
  /** Index into `platforms` / `contentTypes`. */
  platform: Uint8Array;
  platforms: string[];
  contentType: Uint8Array;
  contentTypes: string[];
  /** NaN when unknown. */
  creatorId: Float64Array;
  /** The creator's handle as the post carried it at ingest (null when it had none). */
  creatorHandle: Utf8Column;
  narrativeIds: StringLists;
  patternKeys: StringLists;
}

/** ContentColumns in SharedArrayBuffers, as handed to the answer workers (serve/search/answer-worker.ts). */
export interface ContentParts {
  rows: number;
  title: Utf8ColumnParts;
  description: Utf8ColumnParts;
  contentUrl: Utf8ColumnParts;
  tags: StringListsParts;
  platform: Uint8Array;
  platforms: string[];
  contentType: Uint8Array;
  contentTypes: string[];
  creatorId: Float64Array;
  creatorHandle: Utf8ColumnParts;
  narrativeIds: StringListsParts;
  patternKeys: StringListsParts;
}

/** Move the columns into SharedArrayBuffers (`c` then reads them too) and return them for other threads. */
export function shareContentColumns(c: ContentColumns): ContentParts {
  c.title = new Utf8Column(c.rows, c.title.shared());
  c.description = new Utf8Column(c.rows, c.description.shared());
  c.contentUrl = new Utf8Column(c.rows, c.contentUrl.shared());
  c.creatorHandle = new Utf8Column(c.rows, c.creatorHandle.shared());
  c.platform = toShared(c.platform);
  c.contentType = toShared(c.contentType);
  c.creatorId = toShared(c.creatorId);
  return {
    rows: c.rows,
    title: c.title.parts(),
    description: c.description.parts(),
    contentUrl: c.contentUrl.parts(),
    tags: c.tags.share(),
    platform: c.platform,
    platforms: c.platforms,
    contentType: c.contentType,
    contentTypes: c.contentTypes,
    creatorId: c.creatorId,
    creatorHandle: c.creatorHandle.parts(),
    narrativeIds: c.narrativeIds.share(),
    patternKeys: c.patternKeys.share(),
  };
}

/** Another thread's shared columns (shareContentColumns), read in place. */
export function contentColumnsFrom(p: ContentParts): ContentColumns {
  return {
    rows: p.rows,
    title: new Utf8Column(p.rows, p.title),
    description: new Utf8Column(p.rows, p.description),
    contentUrl: new Utf8Column(p.rows, p.contentUrl),
    tags: new StringLists(p.rows, p.tags),
    platform: p.platform,
    platforms: p.platforms,
    contentType: p.contentType,
    contentTypes: p.contentTypes,
    creatorId: p.creatorId,
    creatorHandle: new Utf8Column(p.rows, p.creatorHandle),
    narrativeIds: new StringLists(p.rows, p.narrativeIds),
    patternKeys: new StringLists(p.rows, p.patternKeys),
  };
}

const CHUNK = 100_000;

function code(list: string[], value: string): number {
  let i = list.indexOf(value);
  if (i < 0) i = list.push(value) - 1;
  if (i > 255) throw new Error(`more than 256 distinct values of a coded column (${value})`);
  return i;
}

/**
 * Rows' memberships from a members table (`owner` per `post_row`), as lists per row (owners in
 * order). Read as numbers (each row's owner as an id into the owners, sorted): a million rows of
 * lists as JS objects were the largest transient of a swap, with the served generation still held.
 */
async function memberships(db: Awaited<ReturnType<typeof openDuckDB>>, file: string, owner: string, rows: number): Promise<StringLists> {
  const lists = new StringLists(rows);
  const members = `read_parquet(${sqlString(file)})`;
  const owners = ((await db.columns(`SELECT DISTINCT ${owner} AS o FROM ${members} ORDER BY o`)).o ?? []) as string[];
  const m = await db.numbers(`WITH o AS (SELECT o, (row_number() OVER (ORDER BY o) - 1)::INTEGER AS id
      FROM (SELECT DISTINCT ${owner} AS o FROM ${members}))
    SELECT m.post_row::INTEGER AS post_row, o.id FROM ${members} m JOIN o ON o.o = m.${owner} ORDER BY m.post_row, o.id`);
  const postRow = m.post_row!;
  const ids = m.id!;
  const list: string[] = [];
  for (let k = 0; k < postRow.length;) {
    const r = postRow[k]!;
    list.length = 0;
    for (; k < postRow.length && postRow[k] === r; k++) list.push(owners[ids[k]!]!);
    lists.set(r, list);
  }
  lists.seal();
  return lists;
}

/** `share`: the text columns are sealed straight into SharedArrayBuffers (shareContentColumns then copies no text). */
export async function loadContentColumns(generationDir: string, rows: number, share = false): Promise<ContentColumns> {
  const c: ContentColumns = {
    rows,
    title: new Utf8Column(rows),
    description: new Utf8Column(rows),
    contentUrl: new Utf8Column(rows),
    tags: new StringLists(rows),
    platform: new Uint8Array(rows),
    platforms: [],
    contentType: new Uint8Array(rows),
    contentTypes: [],
    creatorId: new Float64Array(rows).fill(NaN),
    creatorHandle: new Utf8Column(rows),
    narrativeIds: new StringLists(0),
    patternKeys: new StringLists(0),
  };
  const db = await openDuckDB();
  const file = (n: string) => path.join(generationDir, n);
  try {
    for (let start = 0; start < rows; start += CHUNK) {
      // posts.parquet holds the live rows by row_id (a masked row has none: nulls here).
      const reader = await db.conn
        .runAndReadAll(`SELECT row_id, title, description, content_url, tags, platform, content_type, creator_id::DOUBLE AS creator_id,
          creator_handle FROM read_parquet(${sqlString(file('posts.parquet'))})
        WHERE row_id >= ${start} AND row_id < ${start + CHUNK} ORDER BY row_id`);
      const cols = reader.getColumnsObjectJS() as Record<string, unknown[]>;
      const n = cols.title!.length;
      for (let i = 0; i < n; i++) {
        const r = Number(cols.row_id![i]);
        c.title.set(r, cols.title![i] as string | null);
        c.description.set(r, cols.description![i] as string | null);
        c.contentUrl.set(r, cols.content_url![i] as string | null);
        c.tags.set(r, (cols.tags![i] as string[] | null) ?? []);
        c.platform[r] = code(c.platforms, cols.platform![i] as string);
        c.contentType[r] = code(c.contentTypes, (cols.content_type![i] as string | null) ?? 'text');
        const id = cols.creator_id![i];
        c.creatorId[r] = id === null || id === undefined ? NaN : Number(id);
        c.creatorHandle.set(r, (cols.creator_handle![i] as string | null) || null);
      }
    }
    for (const col of [c.title, c.description, c.contentUrl, c.creatorHandle]) col.seal(share);
    c.tags.seal();
    c.narrativeIds = await memberships(db, file('narrative-members.parquet'), 'narrative_id', rows);
    c.patternKeys = await memberships(db, file('pattern-members.parquet'), 'pattern_key', rows);
  } finally {
    db.close();
  }
  return c;
}
