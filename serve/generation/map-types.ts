// The shapes of a generation's narrative and pattern maps as the server holds them (load-maps.ts
// loads them; docs/api.md, "Narrative" and "Pattern entry", is their JSON).

export interface Narrative {
  id: string;
  label: string;
  summary: string;
  source: 'tracked' | 'emergent';
  window_key: string;
  window_start: string;
  window_end: string;
  computed_at: string;
  content_count: number;
  creator_count: number;
  platform_count: number;
  total_engagement: string;
  emerging_score: number;
  momentum_score: number;
  burst_score: number;
  top_tags: string[];
  score_breakdown: Record<string, unknown>;
  narrative_key: string | null;
  acceleration: number | null;
  diffusion: number | null;
  velocity: number | null;
  lifecycle: string | null;
  trajectory_confidence: string | null;
  representative_content_uuid: string | null;
  sentiment_label: string | null;
  sentiment_score: number | null;
  sentiment_breakdown: Record<string, unknown> | null;
  /** The share of its members the abuse lexicon flags (null in a generation published before it). */
  flagged_share: number | null;
  /** The theme it belongs to (themes.parquet; null in a generation before themes); a tracked narrative's only. */
  theme_id?: string | null;
}

/** A narrative's figures in one generation: the same fields, with the same JSON types, as the narrative itself. */
export interface TrajectoryPoint {
  generation: string;
  as_of: string;
  computed_at: string;
  narrative_id: string;
  content_count: number;
  creator_count: number;
  total_engagement: string;
  velocity: number | null;
  acceleration: number | null;
  momentum_score: number;
  emerging_score: number;
  lifecycle: string | null;
  sentiment_score: number | null;
}

export interface LoadedNarrative {
  narrative: Narrative;
  members: Int32Array;
  /**
   * The posts a reader opens first (central_content_uuids: core/maps/central-posts.ts), as rows; in a
   * generation published before them, its first CENTRAL_POSTS members.
   */
  central: Int32Array;
  dailyCounts: number[];
  trajectory: TrajectoryPoint[];
  /** Unit text centroid (narrative-centroids.f32), null when absent: what related narratives are ranked by. */
  centroid: Float32Array | null;
  /** What its detail and trajectory read off all its members, set when the generation loads (member-reads.ts). */
  reads?: MemberReads;
}

/** The creator and platform split of a map entry's members: the top creators by posts, every platform. */
export interface MemberSplit {
  creators: Array<{ creatorId: number; creatorHandle: string | null; platform: string; posts: number }>;
  platforms: Array<{ platform: string; posts: number; share: number }>;
  platformCodes: Set<number>;
}

/** One day of a narrative's trajectory series. */
export interface DailyPoint {
  start: string;
  content_count: number;
  engagement: number;
  spike: boolean;
  sentiment_score: number | null;
  stance: { critical: number; mixed: number; neutral: number; supportive: number } | null;
}

/** A tracked narrative's member reads, computed at load. */
interface MemberReads {
  split: MemberSplit;
  daily: DailyPoint[];
}

/** Where an id of an earlier generation led: its story's key, in which generation and window. */
export interface EarlierNarrativeId {
  narrative_key: string;
  generation: string;
  window_key: string;
}

export interface RecurrentElement {
  support: number;
  type: string;
  value: string;
}

export interface PatternDetail {
  clusteringMethod: string;
  confidence: number;
  contentCount: number;
  creatorCount: number;
  earlyCount: number;
  lateCount: number;
  lateShare: number | null;
  firstSeenAt: string;
  generation: string;
  label: string;
  labelSource: string;
  medoidContentUuids: string[];
  patternKey: string;
  platformCount: number;
  reconciliation: { cosine: number; memberOverlap: number | null } | null;
  recurrentElements: RecurrentElement[];
  scopeDays: number;
  summary: string | null;
  tagAttachedMembers: number;
  totalEngagement: number;
  trajectory: Array<{ contentCount: number; creatorCount: number; generation: string }>;
}

export interface Lookalike {
  centroidCosine: number;
  corroborationCount: number;
  label: string;
  patternKey: string;
  tagJaccard: number;
  sharedElements: Record<string, Array<{ neighborSupport: number; selfSupport: number; value: string }>>;
}

export interface RepresentativeContent {
  contentUuid: string;
  isRepresentative: boolean;
  engagement: number;
  centroidSimilarity: number | null;
  contentUrl: string | null;
  description: string | null;
  platform: string | null;
  publishedAt: string | null;
  title: string | null;
}

export interface LoadedPattern {
  scope: string;
  detail: PatternDetail;
  members: Int32Array;
  lookalikes: Lookalike[];
  representatives: RepresentativeContent[];
  tags: string[];
  /** Analysed terms of the label, summary and element values (lexicalMatch in search). */
  text: string[];
  /** Unit visual centroid (pattern-centroids.f32), null when absent. */
  centroid: Float32Array | null;
}
