// What a narrative and a theme read alike from their table rows (narratives.parquet, themes.parquet):
// their window, counts and scores, the figures of their daily series and sentiment and the share the
// abuse lexicon flags, in the JSON types docs/api.md gives them (counts numbers, total_engagement a
// string of digits); and their central posts as rows.
import { columnNames, sqlString, type DuckDB, type Row } from '../../core/infra/duckdb.ts';

export const num = (v: unknown): number => Number(v);
export const numOrNull = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));
export const json = <T>(v: unknown): T | null => (typeof v === 'string' ? (JSON.parse(v) as T) : null);
const strOrNull = (v: unknown): string | null => (v as string | null | undefined) ?? null;

export function windowFields(r: Row) {
  return {
    window_key: r.window_key as string,
    window_start: r.window_start as string,
    window_end: r.window_end as string,
    computed_at: r.computed_at as string,
  };
}

export function countFields(r: Row) {
  return {
    content_count: num(r.content_count),
    creator_count: num(r.creator_count),
    platform_count: num(r.platform_count),
    total_engagement: String(r.total_engagement),
    emerging_score: num(r.emerging_score),
    momentum_score: num(r.momentum_score),
    // A generation published before burst_score has none: 0, so the momentum order decides among its items.
    burst_score: r.burst_score == null ? 0 : num(r.burst_score),
  };
}

export function seriesFields(r: Row) {
  return {
    acceleration: numOrNull(r.acceleration),
    diffusion: numOrNull(r.diffusion),
    velocity: numOrNull(r.velocity),
    lifecycle: strOrNull(r.lifecycle),
    trajectory_confidence: strOrNull(r.trajectory_confidence),
    representative_content_uuid: strOrNull(r.representative_content_uuid),
    sentiment_label: strOrNull(r.sentiment_label),
    sentiment_score: numOrNull(r.sentiment_score),
    sentiment_breakdown: json<Record<string, unknown>>(r.sentiment_breakdown),
    // Null in a generation published before it.
    flagged_share: numOrNull(r.flagged_share),
  };
}

/**
 * The central posts (central_content_uuids) of each entry of `table` (narratives.parquet,
 * themes.parquet) as rows of the generation, in order, by id: a post is a member of one narrative
 * per window, so its uuid and window name its row in `members` (narrative-members.parquet). Null
 * for a table written before the column.
 */
export async function centralRowsOf(db: Pick<DuckDB, 'all'>, table: string, members: string): Promise<Map<string, Int32Array> | null> {
  const from = `read_parquet(${sqlString(table)})`;
  if (!(await columnNames(db, from)).has('central_content_uuids')) return null;
  const res = await db.all<{ id: string; rows: number[] }>(`SELECT c.id, list(m.post_row ORDER BY c.i) AS rows
    FROM (SELECT id, window_key, unnest(central_content_uuids) AS uuid, generate_subscripts(central_content_uuids, 1) AS i FROM ${from}) c
    JOIN read_parquet(${sqlString(members)}) m ON m.uuid = c.uuid AND m.window_key = c.window_key GROUP BY c.id`);
  return new Map(res.map((r) => [r.id, Int32Array.from(r.rows, Number)]));
}
