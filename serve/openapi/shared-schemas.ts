// The answer parts several endpoints share: content items and stored rows, creators, narratives,
// themes, patterns and the error shape (docs/api.md; field definitions in docs/fields.md).
import { bool, int, nonNegative, nullable, num, obj, ref, str, strList, unit, windowEnum, digits, type Schema } from './schema-kit.ts';

const enrichment = obj({
  aestheticStyle: strList,
  attributeConfidence: nullable('number'),
  brandProducts: strList,
  coverage: obj({ attributes: bool, novelty: bool, sentiment: bool }),
  emotionMood: strList,
  noveltyScore: nullable('number'),
  saturationScore: nullable('number'),
  themes: strList,
  tone: nullable('string'),
  toneConfidence: nullable('number'),
});

const storedContent = {
  uuid: str,
  commentCount: num,
  likeCount: num,
  shareCount: num,
  viewCount: num,
  narrativeIds: strList,
  patternKeys: strList,
  tags: strList,
};
const storedOptional = {
  contentType: nullable('string'),
  creatorId: nullable('number'),
  description: nullable('string'),
  title: nullable('string'),
  platform: nullable('string'),
  publishedAt: nullable('string'),
  followerCount: nullable('number'),
  enrichment: ref('PublicEnrichment'),
};

const contentItem = obj(
  {
    ...storedContent,
    authorReach: unit,
    engagementDepth: unit,
    engagementScore: unit,
    exampleRankingScore: num,
    rawSimilarity: { type: 'number', minimum: -1, maximum: 1 },
    similarity: unit,
    recencyScore: unit,
    rrfScore: num,
  },
  {
    ...storedOptional,
    intentEvidenceSource: { type: 'string', enum: ['authored_text', 'no_match', 'no_text', 'tag_only'] },
    intentSimilarity: nullable('number'),
    relevance: unit,
  },
);

/** A creator's handle as its posts carried it at ingest (posts.parquet creator_handle); null when none did. */
export const handle: Schema = {
  ...nullable('string'),
  description: "the creator's handle as its posts carried it at ingest; null when none did",
};
const storedRow = obj(storedContent, { ...storedOptional, contentUrl: nullable('string'), creatorHandle: handle });

export const lifecycle = nullable({ type: 'string', enum: ['emerging', 'growing', 'peaking', 'declining', 'dormant', 'steady'] });
const trajectoryConfidence = nullable({ type: 'string', enum: ['high', 'medium', 'low'] });
const sentimentBreakdown = nullable(
  obj(
    {},
    {
      coverage: num,
      dominant_tone: nullable('string'),
      stance: nullable(obj({ critical: num, mixed: num, neutral: num, supportive: num })),
      stance_coverage: num,
    },
  ),
);

/** The figures of a narrative's or a theme's daily series and sentiment, and the share flagged (docs/fields.md), nullable. */
const seriesFigures = {
  acceleration: nullable('number'),
  diffusion: nullable('number'),
  velocity: nullable('number'),
  lifecycle,
  trajectory_confidence: trajectoryConfidence,
  representative_content_uuid: nullable('string'),
  sentiment_label: nullable('string'),
  sentiment_score: nullable('number'),
  sentiment_breakdown: sentimentBreakdown,
  flagged_share: {
    ...nullable(unit),
    description: 'the share of its posts the abuse lexicon flags (docs/fields.md); null in a generation published before it',
  },
};

export const narrative = obj(
  {
    id: str,
    label: str,
    summary: str,
    source: { type: 'string', enum: ['emergent', 'tracked'] },
    window_key: windowEnum,
    window_start: str,
    window_end: str,
    computed_at: str,
    content_count: num,
    creator_count: num,
    platform_count: num,
    total_engagement: digits,
    emerging_score: unit,
    momentum_score: unit,
    burst_score: nonNegative,
    top_tags: strList,
    score_breakdown: obj(
      { content_count: num, creator_count: num, platform_count: num, total_engagement: num },
      { clustering_method: str, pair_count: num, seed_tag: str },
    ),
  },
  {
    narrative_key: nullable('string'),
    ...seriesFigures,
    theme_id: { ...nullable('string'), description: 'the theme it belongs to (GET /themes/{id}); tracked narratives only' },
    memberOverlap: num,
    overlapZScore: num,
    overlap_count: num,
    queryRelevance: unit,
    text_rank: num,
    similarity: { type: 'number', description: 'GET /narratives/{id}/related: cosine of the two text centroids' },
  },
);

/** A theme (docs/api.md, "Theme"): a window's narratives about one event or subject. */
export const theme = obj({
  id: str,
  theme_key: str,
  label: str,
  summary: str,
  window_key: windowEnum,
  window_start: str,
  window_end: str,
  computed_at: str,
  narrative_count: int,
  content_count: int,
  creator_count: int,
  platform_count: int,
  total_engagement: digits,
  emerging_score: unit,
  momentum_score: unit,
  burst_score: nonNegative,
  ...seriesFigures,
  top_tags: strList,
});

const patternDetail = obj({
  clusteringMethod: str,
  confidence: unit,
  contentCount: num,
  creatorCount: num,
  earlyCount: num,
  lateCount: num,
  lateShare: nullable('number'),
  firstSeenAt: str,
  generation: str,
  label: str,
  labelSource: str,
  medoidContentUuids: strList,
  patternKey: str,
  platformCount: num,
  reconciliation: nullable(obj({ cosine: num, memberOverlap: nullable('number') })),
  recurrentElements: { type: 'array', items: obj({ support: num, type: str, value: str }) },
  scopeDays: num,
  summary: nullable('string'),
  tagAttachedMembers: num,
  totalEngagement: num,
  trajectory: { type: 'array', items: obj({ contentCount: num, creatorCount: num, generation: str }) },
});
const lookalike = obj({
  centroidCosine: num,
  corroborationCount: num,
  label: str,
  patternKey: str,
  tagJaccard: unit,
  sharedElements: {
    type: 'object',
    additionalProperties: { type: 'array', items: obj({ neighborSupport: num, selfSupport: num, value: str }) },
  },
});
const representative = obj({
  contentUuid: str,
  isRepresentative: bool,
  engagement: num,
  centroidSimilarity: nullable('number'),
  contentUrl: nullable('string'),
  description: nullable('string'),
  platform: nullable('string'),
  publishedAt: nullable('string'),
  title: nullable('string'),
});
const patternEntry = obj({
  pattern: ref('PatternDetail'),
  lexicalMatch: unit,
  memberTextMatch: unit,
  visualSimilarity: num,
  queryRelevance: unit,
  lookalikes: { type: 'array', items: ref('Lookalike') },
  representativeContent: { type: 'array', items: ref('RepresentativeContent') },
});
const error = obj({ error: str }, { request_id: str }, true);

/** The shared components, in the document's order. */
export function sharedSchemas(): Record<string, Schema> {
  return {
    ContentItem: contentItem,
    StoredContent: storedRow,
    PublicEnrichment: enrichment,
    Creator: obj({ creatorId: num, followerCount: nullable('number'), hits: num, platform: str }, { creatorHandle: handle }),
    Narrative: narrative,
    Theme: theme,
    PatternDetail: patternDetail,
    PatternEntry: patternEntry,
    Lookalike: lookalike,
    RepresentativeContent: representative,
    Error: error,
  };
}
