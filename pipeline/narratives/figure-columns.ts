// The columns a narrative and a theme share in their tables (narratives.parquet, themes.parquet;
// docs/snapshot-tables.md): the figures of their members (cluster-figures-and-words.ts) and their top tags,
// and what a reader opens first.
import type { MemberFigures } from './cluster-figures-and-words.ts';

/** After the id and the key: the window, when the stage ran, and the words. */
export const HEAD_COLUMNS = {
  window_key: 'VARCHAR',
  window_start: 'VARCHAR',
  window_end: 'VARCHAR',
  computed_at: 'VARCHAR',
  label: 'VARCHAR',
  summary: 'VARCHAR',
} as const;

export const FIGURE_COLUMNS = {
  content_count: 'BIGINT',
  creator_count: 'BIGINT',
  platform_count: 'BIGINT',
  total_engagement: 'VARCHAR',
  emerging_score: 'DOUBLE',
  momentum_score: 'DOUBLE',
  burst_score: 'DOUBLE',
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
} as const;

/** The FIGURE_COLUMNS values of a narrative or a theme; `representative` its representative post's uuid. */
export function figureValues(f: MemberFigures & { topTags: string[] }, representative: string | null | undefined) {
  return {
    content_count: f.contentCount,
    creator_count: f.creatorCount,
    platform_count: f.platformCount,
    total_engagement: String(Math.round(f.totalEngagement)),
    emerging_score: f.series.emergingScore,
    momentum_score: f.series.momentumScore,
    burst_score: f.series.burstScore,
    velocity: f.series.velocity,
    acceleration: f.series.acceleration,
    diffusion: f.diffusion,
    lifecycle: f.series.lifecycle,
    trajectory_confidence: f.series.trajectoryConfidence,
    representative_content_uuid: representative ?? null,
    sentiment_label: f.sentiment.label,
    sentiment_score: f.sentiment.score,
    sentiment_breakdown: JSON.stringify(f.sentiment.breakdown),
    top_tags: f.topTags,
  };
}

/** What a reader opens first (core/maps/central-posts.ts): the share of the members the abuse lexicon flags, the central posts. */
export const READER_COLUMNS = {
  flagged_share: 'DOUBLE',
  central_content_uuids: 'VARCHAR[]',
} as const;

/** The READER_COLUMNS values of a narrative or a theme (`uuidOf`: a named row's uuid). */
export function readerValues(f: { flaggedShare: number; central: readonly number[] }, uuidOf: (row: number) => string | undefined) {
  return { flagged_share: f.flaggedShare, central_content_uuids: f.central.map((r) => uuidOf(r)!) };
}
