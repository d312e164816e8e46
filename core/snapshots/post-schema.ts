// The canonical post, as the pipeline stores it and publishes it in posts.parquet.
// docs/ingest-format.md is the input contract; this is what survives validation and normalisation.

export const PLATFORM_NAME = /^[a-z0-9][a-z0-9_.-]{0,39}$/;
export const CONTENT_TYPES = ['text', 'image', 'video', 'carousel'] as const;
export type ContentType = (typeof CONTENT_TYPES)[number];
export const MEDIA_KINDS = ['image', 'video'] as const;

/** Engagement counters: non-negative integers, updated when a later observation arrives. */
export const COUNT_FIELDS = ['like_count', 'comment_count', 'share_count', 'view_count'] as const;

/** DuckDB column definitions of a normalised post (work store and snapshot). */
export const POST_COLUMNS_SQL = `
  uuid VARCHAR NOT NULL,
  platform VARCHAR NOT NULL,
  content_type VARCHAR NOT NULL,
  creator_id BIGINT,
  creator_handle VARCHAR,
  follower_count BIGINT,
  title VARCHAR,
  description VARCHAR,
  tags VARCHAR[] NOT NULL,
  published_at TIMESTAMPTZ NOT NULL,
  observed_at TIMESTAMPTZ NOT NULL,
  like_count BIGINT NOT NULL,
  comment_count BIGINT NOT NULL,
  share_count BIGINT NOT NULL,
  view_count BIGINT NOT NULL,
  content_url VARCHAR,
  media STRUCT(kind VARCHAR, path VARCHAR, url VARCHAR, frames VARCHAR[])[] NOT NULL,
  language VARCHAR,
  text_embedding FLOAT[],
  visual_embedding FLOAT[]`;

/** Columns of a post in snapshot order (embeddings go to index files, not posts.parquet). */
export const SNAPSHOT_POST_COLUMNS = [
  'uuid',
  'platform',
  'content_type',
  'creator_id',
  'creator_handle',
  'follower_count',
  'title',
  'description',
  'tags',
  'published_at',
  'observed_at',
  'like_count',
  'comment_count',
  'share_count',
  'view_count',
  'content_url',
  'media',
  'language',
] as const;
