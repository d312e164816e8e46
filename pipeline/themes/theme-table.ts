// themes.parquet: one row per theme of every window (columns in docs/snapshot-tables.md, fields in
// docs/fields.md, "Themes"), in the order the narratives stage built them.
import type { Match } from '../../core/clustering/tracking.ts';
import { writeRowTable } from '../row-table.ts';
import type { StageContext } from '../stage-context.ts';
import type { BuiltTheme } from './build.ts';

export const THEME_COLUMNS = {
  id: 'VARCHAR',
  theme_key: 'VARCHAR',
  window_key: 'VARCHAR',
  window_start: 'VARCHAR',
  window_end: 'VARCHAR',
  computed_at: 'VARCHAR',
  label: 'VARCHAR',
  summary: 'VARCHAR',
  narrative_count: 'BIGINT',
  content_count: 'BIGINT',
  creator_count: 'BIGINT',
  platform_count: 'BIGINT',
  total_engagement: 'VARCHAR',
  emerging_score: 'DOUBLE',
  momentum_score: 'DOUBLE',
  velocity: 'DOUBLE',
  acceleration: 'DOUBLE',
  diffusion: 'DOUBLE',
  lifecycle: 'VARCHAR',
  trajectory_confidence: 'VARCHAR',
  representative_content_uuid: 'VARCHAR',
  sentiment_label: 'VARCHAR',
  sentiment_score: 'DOUBLE',
  sentiment_breakdown: 'VARCHAR',
  top_tags: 'VARCHAR[]',
  daily_counts: 'INTEGER[]',
  previous_id: 'VARCHAR',
  match_cosine: 'DOUBLE',
  match_overlap: 'DOUBLE',
  row_id: 'BIGINT',
} as const;

export interface NamedTheme {
  t: BuiltTheme;
  id: string;
  key: string;
  /** The served generation's theme it continues (its id), and how it matched; null for a new one. */
  match: (Omit<Match, 'previous'> & { id: string }) | null;
}

export async function writeThemeTable(
  ctx: StageContext,
  themes: readonly NamedTheme[],
  computedAt: string,
  uuidOf: (row: number) => string | undefined,
): Promise<void> {
  const rows = themes.map(({ t, id, key, match }, i) => ({
    row_id: i,
    id,
    theme_key: key,
    window_key: t.window.key,
    window_start: t.window.start,
    window_end: t.window.end,
    computed_at: computedAt,
    label: t.label,
    summary: t.summary,
    narrative_count: t.narratives.length,
    content_count: t.contentCount,
    creator_count: t.creatorCount,
    platform_count: t.platformCount,
    total_engagement: String(Math.round(t.totalEngagement)),
    emerging_score: t.series.emergingScore,
    momentum_score: t.series.momentumScore,
    velocity: t.series.velocity,
    acceleration: t.series.acceleration,
    diffusion: t.diffusion,
    lifecycle: t.series.lifecycle,
    trajectory_confidence: t.series.trajectoryConfidence,
    representative_content_uuid: uuidOf(t.representative) ?? null,
    sentiment_label: t.sentiment.label,
    sentiment_score: t.sentiment.score,
    sentiment_breakdown: JSON.stringify(t.sentiment.breakdown),
    top_tags: t.topTags,
    daily_counts: Array.from(t.series.counts),
    previous_id: match?.id ?? null,
    match_cosine: match?.cosine ?? null,
    match_overlap: match?.overlap ?? null,
  }));
  await writeRowTable(ctx, 'themes', THEME_COLUMNS, rows);
}
