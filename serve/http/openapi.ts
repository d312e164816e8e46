// The OpenAPI 3.1 document of the HTTP API, served at {base_url}/openapi.json. What a request may
// carry (bodies, query parameters, the Idempotency-Key) is generated from the zod schemas the
// routes and the MCP tools validate with, so a rule changed there changes here. The answers are
// plain JSON Schema 2020-12, strict where docs/api.md is (required fields, types, nullability,
// enums), and test/fast/openapi.test.ts validates real responses of every endpoint against them, so
// this document cannot drift from what the server sends.
import { WINDOW_KEYS } from '../../core/windows.ts';
import { usageQuery } from '../account/account-queries.ts';
import { deliveriesQuery } from '../alerts/delivery-routes.ts';
import { LIFECYCLES, watchBodySchema } from '../alerts/watch-schema.ts';
import { toCredits } from '../../ledger/money.ts';
import { PRICES } from '../billing/prices.ts';
import { JOB_KINDS, jobBodySchema } from '../jobs/job-request.ts';
import {
  narrativeDetailQuery,
  narrativeSearchQuery,
  patternContentQuery,
  patternsBrowseQuery,
  themesQuery,
  trendingQuery,
} from '../maps/map-queries.ts';
import { relatedNarrativesQuery } from '../maps/related-narratives.ts';
import { TRENDING_SORT_KEYS } from '../generation/trending-order.ts';
import { mediaBatchQuery, mediaThumbnailQuery } from '../media/media-routes.ts';
import { searchBodySchema } from '../search/search-body.ts';
import { idempotencyKeySchema } from './idempotency-key.ts';
import { bodySchema, queryParameters } from './query.ts';

type Schema = Record<string, unknown>;
const ref = (name: string): Schema => ({ $ref: `#/components/schemas/${name}` });
const nullable = (type: string | Schema): Schema =>
  typeof type === 'string' ? { type: [type, 'null'] } : { anyOf: [type, { type: 'null' }] };
const obj = (required: Record<string, Schema>, optional: Record<string, Schema> = {}, extra = false): Schema => ({
  type: 'object',
  required: Object.keys(required),
  properties: { ...required, ...optional },
  additionalProperties: extra,
});
const num: Schema = { type: 'number' };
const int: Schema = { type: 'integer' };
const str: Schema = { type: 'string' };
const bool: Schema = { type: 'boolean' };
const strList: Schema = { type: 'array', items: str };
const windowEnum: Schema = { type: 'string', enum: [...WINDOW_KEYS] };
const unit: Schema = { type: 'number', minimum: 0, maximum: 1 };

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
const handle: Schema = { ...nullable('string'), description: "the creator's handle as its posts carried it at ingest; null when none did" };
const storedRow = obj(storedContent, { ...storedOptional, contentUrl: nullable('string'), creatorHandle: handle });

const lifecycle = nullable({ type: 'string', enum: ['emerging', 'growing', 'peaking', 'declining', 'dormant', 'steady'] });
const trajectoryConfidence = nullable({ type: 'string', enum: ['high', 'medium', 'low'] });
const digits: Schema = { type: 'string', pattern: '^[0-9]+$' };
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

/** The figures of a narrative's or a theme's daily series and sentiment (docs/fields.md), nullable. */
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
};

const narrative = obj(
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
const theme = obj({
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
const insufficient = obj(
  {
    error: { type: 'string', enum: ['insufficient_credits'] },
    credits_required: num,
    credits_available: num,
    recommendations: obj({
      maxLimitForWindow: {
        type: 'integer',
        minimum: 0,
        description:
          'The largest limit the available balance covers; 0 for patterns and stats, and for ' +
          "insights when it cannot cover the window's minimum analysis depth (7d 375, 30d and 90d " +
          '750, all 1,500 records), with or without includeSignals',
      },
      topUpUrl: str,
    }),
    tier: { type: 'string', enum: ['1', '2'] },
    window: windowEnum,
  },
  { request_id: str },
);

const paged = (items: Schema, more: Record<string, Schema> = {}) => obj({ items: { type: 'array', items }, ...more });
/** A page of a map list (GET /narratives/trending, GET /themes): the same paging and sort keys. */
const mapList = (items: Schema) =>
  paged(items, {
    window: windowEnum,
    sort: { type: 'string', enum: [...TRENDING_SORT_KEYS] },
    generation: str,
    total: int,
    offset: int,
    limit: int,
    next_offset: nullable('integer'),
  });

const periodChange = obj({ days: int, current: int, previous: int, ratio: nullable('number') });
/** A trending item: a Narrative, with its daily counts and period change when `daily=true`. */
const trendingItem: Schema = {
  ...narrative,
  properties: {
    ...(narrative.properties as Record<string, Schema>),
    daily_counts: { type: 'array', items: int },
    period_change: periodChange,
  },
};
/** A GET /themes item: a Theme with its narratives in short, and its daily counts and period change when `daily=true`. */
const themeItem: Schema = {
  ...theme,
  required: [...(theme.required as string[]), 'narratives'],
  properties: {
    ...(theme.properties as Record<string, Schema>),
    narratives: {
      type: 'array',
      items: obj({ id: str, narrative_key: nullable('string'), label: str, content_count: int, momentum_score: unit, lifecycle }),
    },
    daily_counts: { type: 'array', items: int },
    period_change: periodChange,
  },
};
const stanceShares = nullable(obj({ critical: unit, mixed: unit, neutral: unit, supportive: unit }));

const mediaItem = obj({
  index: int,
  kind: { type: 'string', enum: ['image', 'video'] },
  source: { type: 'string', enum: ['local', 'remote'] },
  url: nullable('string'),
  thumbnail: nullable('string'),
  refused: {
    ...nullable('string'),
    description:
      'why a local media has no thumbnail (the file is gone, leads outside the landing folder or is not an image); null otherwise',
  },
  frames: int,
});

// Asynchronous jobs (docs/jobs.md).
const jobKinds = [...JOB_KINDS];
const counted = (name: string) => ({ type: 'array', items: obj({ [name]: str, count: int, share: unit }) });
const resultOf = (kind: string, fields: Record<string, Schema>, optional: Record<string, Schema> = {}) =>
  obj(
    {
      kind: { const: kind },
      query: str,
      window: windowEnum,
      window_start: str,
      window_end: str,
      generation: str,
      computed_at: str,
      ...fields,
    },
    optional,
  );
const percentiles = obj({ p50: num, p90: num, p99: num, max: num, mean: num });
const jobResults = {
  RecordsResult: resultOf('records', { count: int, content: { type: 'array', items: ref('ContentItem') } }),
  InsightsResult: resultOf(
    'insights',
    {
      analysed: int,
      narratives: { type: 'array', items: ref('Narrative') },
      sentiment: obj({
        label: nullable('string'),
        score: nullable('number'),
        coverage: unit,
        dominant_tone: nullable('string'),
        tones: counted('tone'),
        stance: nullable(obj({ critical: unit, mixed: unit, neutral: unit, supportive: unit })),
        stance_coverage: unit,
      }),
      themes: counted('theme'),
      tags: counted('tag'),
      top_creators: { type: 'array', items: ref('Creator') },
      platforms: counted('platform'),
      time_series: { type: 'array', items: obj({ day: str, count: int, engagement: num }) },
      summary: obj({ text: str, source: { type: 'string', enum: ['template', 'llm'] } }, { model: str, fallback_reason: str }),
    },
    {
      signals: obj({
        velocity: nullable('number'),
        acceleration: nullable('number'),
        momentum_score: unit,
        emerging_score: unit,
        lifecycle: nullable({ type: 'string', enum: ['emerging', 'growing', 'peaking', 'declining', 'dormant', 'steady'] }),
        trajectory_confidence: { type: 'string', enum: ['high', 'medium', 'low'] },
        anomalies: { type: 'array', items: obj({ day: str, count: int, zScore: num }) },
      }),
    },
  ),
  PatternsResult: resultOf('patterns', { records_considered: int, patterns: { type: 'array', items: ref('PatternEntry') } }),
  StatsResult: resultOf('stats', {
    records: int,
    by_platform: counted('platform'),
    by_content_type: counted('contentType'),
    by_day: { type: 'array', items: obj({ day: str, count: int }) },
    engagement: obj({ interactions: percentiles, likes: percentiles, comments: percentiles, shares: percentiles, views: percentiles }),
    creators: obj({ distinct: int, records_with_creator: int, top_creator_share: unit, top10_share: unit, posts_per_creator_gini: unit }),
  }),
};
const job = obj(
  {
    jobId: str,
    kind: { type: 'string', enum: jobKinds },
    status: { type: 'string', enum: ['queued', 'running', 'succeeded', 'failed'] },
    statusUrl: str,
    request: obj({ kind: { type: 'string', enum: jobKinds }, query: str, limit: int, window: windowEnum, includeSignals: bool }),
    createdAt: str,
    startedAt: nullable('string'),
    finishedAt: nullable('string'),
    generation: nullable('string'),
    estimated_cost: { type: 'number', minimum: 0 },
    charged: nullable('number'),
    records: nullable('integer'),
    cached: bool,
    error: nullable(obj({ status: int, error: str })),
  },
  { request_id: str, result: { oneOf: Object.keys(jobResults).map(ref) } },
);

/** How an id that was not the narrative's own current id was resolved (docs/api.md, "Ids a client can keep"). */
/** Alerts (docs/api.md, "Alerts"): a watch as kept, an event it fires, and the event with its delivery state. */
const watchTarget: Schema = {
  oneOf: [
    obj({ kind: { const: 'query' }, query: str }),
    obj({ kind: { const: 'narrative' }, narrative_key: str }),
    obj({ kind: { const: 'theme' }, theme_key: str }),
    obj({ kind: { const: 'any' } }),
  ],
};
const alertSchemas: Record<string, Schema> = {
  WatchRequest: bodySchema(watchBodySchema),
  Watch: obj({
    id: { type: 'string', pattern: '^alw_' },
    account: str,
    name: nullable('string'),
    target: watchTarget,
    windows: { type: 'array', items: windowEnum, minItems: 1 },
    conditions: obj(
      {},
      {
        spike: { const: true },
        lifecycle: obj({}, { to: { type: 'array', items: { type: 'string', enum: [...LIFECYCLES] } } }),
        momentum: obj({ level: unit, direction: { type: 'string', enum: ['up', 'down'] } }),
        new_narrative: { const: true },
      },
    ),
    url: str,
    created_at: str,
    secret_version: int,
    paused: nullable(obj({ at: str, reason: str })),
  }),
  NarrativeFigures: obj({
    generation: str,
    narrative_id: str,
    content_count: int,
    momentum_score: unit,
    emerging_score: unit,
    lifecycle,
    last_day: nullable('string'),
    last_day_posts: int,
    spike: bool,
  }),
  AlertEvent: obj({
    id: { type: 'string', pattern: '^evt_' },
    type: { type: 'string', enum: ['narrative.spike', 'narrative.lifecycle', 'narrative.momentum', 'narrative.new_narrative'] },
    watch_id: str,
    account: str,
    created_at: str,
    generation: str,
    previous_generation: nullable('string'),
    window: windowEnum,
    narrative: obj({ id: str, narrative_key: str, label: str, summary: str, theme_id: nullable('string'), url: str }),
    why: obj({ text: str, before: nullable(ref('NarrativeFigures')), after: ref('NarrativeFigures') }),
    posts: { type: 'array', maxItems: 3, items: obj({ uuid: str, title: nullable('string'), url: nullable('string') }) },
  }),
  EventState: obj({
    event: ref('AlertEvent'),
    status: { type: 'string', enum: ['pending', 'delivered', 'failed', 'paused'] },
    attempts: int,
    next_attempt_at: nullable('string'),
    delivered_at: nullable('string'),
  }),
  WatchCreated: obj({ watch: ref('Watch'), secret: { type: 'string', pattern: '^whsec_' } }),
  WatchList: obj({ items: { type: 'array', items: ref('Watch') }, total: int, limit: int }),
  WatchDetail: obj({ watch: ref('Watch'), events: { type: 'array', items: ref('EventState'), maxItems: 10 } }),
  WatchDeleted: obj({ id: str, deleted: { const: true } }),
  DeliveryAttempt: obj({
    event_id: str,
    watch_id: str,
    attempt: { type: 'integer', minimum: 1 },
    at: str,
    status: nullable('integer'),
    error: nullable('string'),
    latency_ms: { type: 'integer', minimum: 0 },
    outcome: { type: 'string', enum: ['delivered', 'retry', 'gave_up'] },
  }),
  DeliveryLog: obj({
    watch_id: str,
    paused: nullable(obj({ at: str, reason: str })),
    items: { type: 'array', items: ref('DeliveryAttempt') },
    limit: int,
  }),
  Redelivery: obj({ queued: { const: true }, event: ref('EventState') }),
  WatchResumed: obj({ watch: ref('Watch'), was_paused: bool, queued: int }),
  WatchPaused: obj({ error: str, paused: obj({ at: str, reason: str }) }),
};

const resolvedBy = { requested_id: str, resolved_by: { type: 'string', enum: ['narrative_key', 'earlier_generation_id'] } };

export function openApiDocument(prefix: string): Schema {
  const errors = (...codes: number[]) =>
    Object.fromEntries(
      codes.map((c) => [
        String(c),
        { description: ERROR_TEXT[c], content: { 'application/json': { schema: c === 402 ? ref('InsufficientCredits') : ref('Error') } } },
      ]),
    );
  const json = (schema: Schema, description: string) => ({ description, content: { 'application/json': { schema } } });
  const pathParam = (name: string, description: string) => ({ name, in: 'path', required: true, schema: str, description });
  const readErrors = errors(400, 403, 404, 429);
  return {
    openapi: '3.1.0',
    info: {
      title: 'Content intelligence service',
      version: 'v1.0.1',
      description:
        'Search, narrative and pattern maps over social posts, billed in credits (1 credit = 1.00 ' +
        'USD). Every request carries x-api-key; credits are integer micro-credits inside and ' +
        'decimals in JSON. Field definitions: docs/fields.md.',
    },
    servers: [{ url: prefix || '/', description: 'http://HOST:PORT + SERVICE_PREFIX' }],
    security: [{ apiKey: [] }],
    paths: {
      '/search': {
        post: {
          summary: `Synchronous hybrid search; ${toCredits(PRICES.record)} credits per row returned (hold: limit x ${toCredits(PRICES.record)})`,
          parameters: [
            {
              name: 'Idempotency-Key',
              in: 'header',
              required: false,
              schema: bodySchema(idempotencyKeySchema),
              description: 'A retry with the same key and body returns the original answer and charge.',
            },
          ],
          requestBody: { required: true, content: { 'application/json': { schema: ref('SearchRequest') } } },
          responses: {
            200: {
              ...json(ref('SearchResponse'), 'Ranked content with its creators and narratives'),
              headers: {
                'X-Service-Credits-Used': { schema: str, description: 'credits charged by this call' },
                'X-Service-Credits-Remaining': { schema: str, description: 'available credits after the call' },
              },
            },
            202: {
              ...json(
                ref('SearchHandedToJob'),
                'Over SEARCH_BUDGET_MS: the hold released, an insights job submitted instead (docs/api.md, "POST /search")',
              ),
              headers: {
                'X-Service-Credits-Used': { schema: str, description: "the job's hold (its charge on a cache hit)" },
                'X-Service-Credits-Remaining': { schema: str, description: 'available credits' },
              },
            },
            ...errors(400, 402, 403, 409, 415, 422, 429),
          },
        },
      },
      '/intelligence/jobs': {
        post: {
          summary:
            `Submit a job: records ${toCredits(PRICES.record)} per row returned, insights ${toCredits(PRICES.insightRecord)} per record analysed ` +
            `(+${toCredits(PRICES.signals)} with signals), patterns ${toCredits(PRICES.patterns)}, ` +
            `stats ${toCredits(PRICES.stats)}; held at submit (docs/jobs.md)`,
          parameters: [
            {
              name: 'Idempotency-Key',
              in: 'header',
              required: false,
              schema: bodySchema(idempotencyKeySchema),
              description: 'The same key and body give the same job; another body is a 422.',
            },
          ],
          requestBody: { required: true, content: { 'application/json': { schema: ref('JobRequest') } } },
          responses: {
            200: json(ref('Job'), 'A cache hit (docs/jobs.md, "Cache"): succeeded, with the result and charged'),
            202: json(ref('Job'), 'Queued (or already running); estimated_cost is the hold'),
            ...errors(400, 402, 403, 409, 415, 422, 429),
          },
        },
      },
      '/intelligence/jobs/{jobId}': {
        get: {
          summary: "A job's state; its result once succeeded (free)",
          parameters: [pathParam('jobId', 'job id')],
          responses: { 200: json(ref('Job'), 'The job'), ...errors(403, 404, 429) },
        },
      },
      '/narratives/trending': {
        get: {
          summary: 'Narratives of a window by momentum, or by emergence, volume or engagement (free)',
          parameters: queryParameters(trendingQuery),
          responses: {
            200: json(ref('NarrativeList'), 'Narratives, by the sort key, then momentum_score, emerging_score, content_count, id'),
            ...readErrors,
          },
        },
      },
      '/themes': {
        get: {
          summary:
            "A window's themes (events, subjects: its narratives grouped), each with its narratives, paged and sorted as trending (free)",
          parameters: queryParameters(themesQuery),
          responses: {
            200: json(ref('ThemeList'), 'Themes, by the sort key, then momentum_score, emerging_score, content_count, id'),
            ...readErrors,
          },
        },
      },
      '/themes/{id}': {
        get: {
          summary: 'One theme with its narratives (free); the id may be a current theme id or a theme_key',
          parameters: [pathParam('id', 'theme id or theme_key')],
          responses: { 200: json(ref('ThemeDetail'), 'The theme'), ...readErrors },
        },
      },
      '/narratives/search': {
        get: {
          summary: 'Search narratives by their labels, summaries, tags and the words of their posts (free)',
          parameters: queryParameters(narrativeSearchQuery),
          responses: { 200: json(ref('NarrativeSearch'), 'Narratives by text_rank (docs/fields.md, "Map search")'), ...readErrors },
        },
      },
      '/narratives/{id}': {
        get: {
          summary:
            'One narrative: posts, creators, platform split (free). The id may be a current id, a ' +
            'narrative_key (the current narrative of that story), an id of an earlier generation in ' +
            'the history, or an emergent id (for an hour)',
          parameters: [pathParam('id', 'narrative id, narrative_key, earlier id or emergent id'), ...queryParameters(narrativeDetailQuery)],
          responses: { 200: json(ref('NarrativeDetail'), 'The narrative'), ...readErrors },
        },
      },
      '/narratives/{id}/related': {
        get: {
          summary:
            'Narratives of the same window about the same thing (free): by cosine of the text centroids, ' +
            'those under min_similarity left out; any id the detail reads',
          parameters: [
            pathParam('id', 'narrative id, narrative_key, earlier id or emergent id'),
            ...queryParameters(relatedNarrativesQuery),
          ],
          responses: { 200: json(ref('NarrativeRelated'), 'Related narratives, most similar first'), ...readErrors },
        },
      },
      '/narratives/{id}/trajectory': {
        get: {
          summary:
            "A narrative's daily series and its metrics over generations (free): every id the detail reads, and the key of a story that has ended",
          parameters: [pathParam('id', 'narrative id, narrative_key, earlier id or emergent id')],
          responses: { 200: json(ref('NarrativeTrajectory'), 'Trajectory'), ...readErrors },
        },
      },
      '/intelligence/patterns': {
        get: {
          summary: 'Browse visual patterns (free)',
          parameters: queryParameters(patternsBrowseQuery),
          responses: { 200: json(ref('PatternList'), 'Patterns'), ...readErrors },
        },
      },
      '/intelligence/patterns/{patternKey}': {
        get: {
          summary: 'One pattern with representative content and lookalikes (free)',
          parameters: [pathParam('patternKey', 'pattern key')],
          responses: { 200: json(ref('PatternResponse'), 'The pattern'), ...readErrors },
        },
      },
      '/intelligence/patterns/{patternKey}/content': {
        get: {
          summary: 'Posts of a pattern (free)',
          parameters: [pathParam('patternKey', 'pattern key'), ...queryParameters(patternContentQuery)],
          responses: { 200: json(ref('PatternContent'), 'Posts, most central first'), ...readErrors },
        },
      },
      '/intelligence/patterns/{patternKey}/lookalikes': {
        get: {
          summary: 'Lookalikes of a pattern (free)',
          parameters: [pathParam('patternKey', 'pattern key')],
          responses: { 200: json(ref('PatternLookalikes'), 'Lookalikes'), ...readErrors },
        },
      },
      '/billing/prices': {
        get: {
          summary: 'What each billed call costs, in credits (free): the search hold is limit x search.per_record',
          responses: { 200: json(ref('Prices'), 'Prices'), ...errors(403, 429) },
        },
      },
      '/media': {
        get: {
          summary: "Many posts' media at once (free): each uuid with its media as GET /media/{uuid} lists them, or null when unknown",
          parameters: queryParameters(mediaBatchQuery),
          responses: { 200: json(ref('MediaBatch'), 'Media by post'), ...errors(400, 403, 429) },
        },
      },
      '/media/{uuid}': {
        get: {
          summary: "A post's media (free): local files with the path of their thumbnail, remote ones with their url",
          parameters: [pathParam('uuid', "the post's uuid")],
          responses: { 200: json(ref('MediaList'), 'Media'), ...readErrors },
        },
      },
      '/media/{uuid}/{index}': {
        get: {
          summary:
            "A thumbnail (WebP, at most 320 px) of a post's local media (free); a video's frame by ?frame=k. " +
            'Remote media: a 404 carrying the url',
          parameters: [
            pathParam('uuid', "the post's uuid"),
            { name: 'index', in: 'path', required: true, schema: { type: 'string', pattern: '^[0-9]{1,3}$' }, description: 'media index' },
            ...queryParameters(mediaThumbnailQuery),
          ],
          responses: {
            200: { description: 'The thumbnail', content: { 'image/webp': { schema: { type: 'string', format: 'binary' } } } },
            304: { description: 'Not modified (If-None-Match)' },
            ...readErrors,
          },
        },
      },
      '/usage': {
        get: {
          summary: 'The credit ledger of the caller, newest first (free)',
          parameters: queryParameters(usageQuery),
          responses: { 200: json(ref('Usage'), 'Entries'), ...readErrors },
        },
      },
      '/health': {
        get: {
          summary: 'Service status and data freshness (free)',
          responses: { 200: json(ref('Health'), 'Status'), ...errors(403, 429) },
        },
      },
      '/alerts': {
        post: {
          summary:
            'Make a watch (free): events are POSTed, signed, to its url when a publish changes what it watches; the signing secret is in this answer only',
          requestBody: { required: true, content: { 'application/json': { schema: ref('WatchRequest') } } },
          responses: {
            201: json(ref('WatchCreated'), 'The watch and its signing secret (shown once)'),
            409: json(ref('Error'), 'The account has ALERTS_PER_ACCOUNT watches already (the answer carries limit)'),
            ...errors(400, 403, 415, 429),
          },
        },
        get: {
          summary: "The account's watches, oldest first, with their paused state (free)",
          responses: { 200: json(ref('WatchList'), 'Watches'), ...errors(403, 429) },
        },
      },
      '/alerts/{id}': {
        get: {
          summary: "One watch with its last 10 events and their delivery state (free); another account's watch is a 404",
          parameters: [pathParam('id', 'watch id (alw_...)')],
          responses: { 200: json(ref('WatchDetail'), 'The watch'), ...errors(403, 404, 429) },
        },
        delete: {
          summary: 'Delete a watch and its events (free)',
          parameters: [pathParam('id', 'watch id (alw_...)')],
          responses: { 200: json(ref('WatchDeleted'), 'Deleted'), ...errors(403, 404, 429) },
        },
      },
      '/alerts/{id}/deliveries': {
        get: {
          summary: "A watch's delivery log (free): each attempt's status, error, latency and outcome, newest first",
          parameters: [pathParam('id', 'watch id (alw_...)'), ...queryParameters(deliveriesQuery)],
          responses: { 200: json(ref('DeliveryLog'), 'Attempts, newest first'), ...errors(400, 403, 404, 429) },
        },
      },
      '/alerts/{id}/events/{event_id}/redeliver': {
        post: {
          summary: "Queue one of the watch's events again now, whatever its state (free); the receiver de-duplicates by X-Alert-Event-Id",
          parameters: [pathParam('id', 'watch id (alw_...)'), pathParam('event_id', 'event id (evt_...)')],
          responses: {
            202: json(ref('Redelivery'), 'Queued'),
            409: json(ref('WatchPaused'), 'The watch is paused: resume it, which queues its waiting events'),
            ...errors(400, 403, 404, 429),
          },
        },
      },
      '/alerts/{id}/resume': {
        post: {
          summary: 'Unpause a watch and queue the events that waited (free)',
          parameters: [pathParam('id', 'watch id (alw_...)')],
          responses: { 200: json(ref('WatchResumed'), 'Resumed'), ...errors(400, 403, 404, 429) },
        },
      },
      '/mcp': {
        post: {
          summary:
            'The MCP tool server (Model Context Protocol, Streamable HTTP, stateless, JSON responses): ' +
            'every capability above as a tool, billed as its HTTP call (README: "MCP")',
          requestBody: {
            required: true,
            content: { 'application/json': { schema: { type: 'object', description: 'a JSON-RPC 2.0 message of MCP' } } },
          },
          responses: {
            200: { description: 'The JSON-RPC response' },
            202: { description: 'A notification, accepted (no body)' },
            ...errors(400, 403, 405, 406, 415, 429),
          },
        },
      },
      '/openapi.json': { get: { summary: 'This document', security: [], responses: { 200: { description: 'OpenAPI 3.1' } } } },
    },
    components: {
      securitySchemes: { apiKey: { type: 'apiKey', in: 'header', name: 'x-api-key' } },
      schemas: {
        SearchRequest: bodySchema(searchBodySchema),
        SearchResponse: obj({
          content: { type: 'array', items: ref('ContentItem'), maxItems: 300 },
          creators: { type: 'array', items: ref('Creator') },
          narratives: { type: 'array', items: ref('Narrative') },
          patterns: { type: 'array', items: ref('PatternEntry') },
          query: str,
          window: windowEnum,
          request_id: str,
          response_time_ms: num,
          usage: obj({ credits: num }),
        }),
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
        ...alertSchemas,
        SearchHandedToJob: obj(
          {
            jobId: str,
            reason: { type: 'string', enum: ['sync_budget_exceeded'] },
            request_id: str,
            status: { type: 'string', enum: ['queued', 'running', 'succeeded'] },
            statusUrl: str,
          },
          { charged: num, estimated_cost: num },
        ),
        JobRequest: bodySchema(jobBodySchema),
        Job: job,
        ...jobResults,
        InsufficientCredits: insufficient,
        NarrativeList: mapList(trendingItem),
        ThemeList: mapList(themeItem),
        ThemeDetail: obj(
          {
            generation: str,
            theme: ref('Theme'),
            daily_counts: { type: 'array', items: int },
            narratives: { type: 'array', items: ref('Narrative') },
          },
          { requested_id: str, resolved_by: { type: 'string', enum: ['theme_key'] } },
        ),
        NarrativeRelated: obj({
          id: str,
          window_key: windowEnum,
          generation: str,
          min_similarity: num,
          items: { type: 'array', items: ref('Narrative') },
        }),
        NarrativeSearch: paged(ref('Narrative'), { q: str, window: nullable(windowEnum), generation: str }),
        NarrativeDetail: obj(
          {
            generation: str,
            narrative: ref('Narrative'),
            theme: {
              ...nullable(obj({ id: str, theme_key: str, label: str, narrative_count: int })),
              description: 'the theme the narrative belongs to, in short (GET /themes/{id}); null for an emergent narrative',
            },
            daily_counts: { type: 'array', items: num },
            posts: paged(ref('StoredContent'), { total: int, offset: int, limit: int, next_offset: nullable('integer') }),
            creators: { type: 'array', items: obj({ creatorId: num, creatorHandle: handle, platform: str, posts: int }) },
            platforms: { type: 'array', items: obj({ platform: str, posts: int, share: unit }) },
          },
          resolvedBy,
        ),
        NarrativeTrajectory: obj(
          {
            id: nullable('string'),
            source: { type: 'string', enum: ['tracked', 'emergent'] },
            narrative_key: nullable('string'),
            window_key: windowEnum,
            generation: str,
            ended: bool,
            daily: {
              type: 'array',
              items: obj({
                start: str,
                content_count: int,
                engagement: { type: 'number', minimum: 0 },
                spike: bool,
                sentiment_score: nullable({ type: 'number', minimum: -1, maximum: 1 }),
                stance: stanceShares,
              }),
            },
            daily_counts: { type: 'array', items: num },
            points: {
              type: 'array',
              items: obj({
                generation: str,
                as_of: str,
                computed_at: str,
                narrative_id: str,
                content_count: int,
                creator_count: int,
                total_engagement: { type: 'string', pattern: '^[0-9]+$' },
                velocity: nullable('number'),
                acceleration: nullable('number'),
                momentum_score: unit,
                emerging_score: unit,
                lifecycle: nullable('string'),
                sentiment_score: nullable('number'),
              }),
            },
          },
          resolvedBy,
        ),
        PatternList: paged(ref('PatternDetail'), {
          scope: windowEnum,
          sort: str,
          generation: str,
          total: int,
          nextCursor: nullable('string'),
        }),
        PatternResponse: obj({
          pattern: ref('PatternDetail'),
          representativeContent: { type: 'array', items: ref('RepresentativeContent') },
          lookalikes: { type: 'array', items: ref('Lookalike') },
        }),
        PatternContent: paged(ref('StoredContent'), { patternKey: str, generation: str, total: int, nextCursor: nullable('string') }),
        PatternLookalikes: obj({ patternKey: str, lookalikes: { type: 'array', items: ref('Lookalike') } }),
        Prices: obj({
          unit: { type: 'string', enum: ['credits'] },
          search: obj({ per_record: num, default_limit: int, max_limit: int }),
          jobs: obj({
            records: obj({ per_record: num }),
            insights: obj({ per_record: num, include_signals: num }),
            patterns: obj({ per_call: num }),
            stats: obj({ per_call: num }),
          }),
        }),
        MediaList: obj({ uuid: str, generation: str, items: { type: 'array', items: mediaItem } }),
        MediaBatch: obj({
          generation: str,
          items: { type: 'array', items: obj({ uuid: str, media: nullable({ type: 'array', items: mediaItem }) }) },
        }),
        Usage: obj({
          account: str,
          balance: num,
          held: num,
          available: num,
          nextCursor: nullable('string'),
          entries: {
            type: 'array',
            items: obj({
              id: str,
              type: { type: 'string', enum: ['topup', 'settlement', 'refund'] },
              credits: num,
              held: nullable('number'),
              charged: nullable('number'),
              released: nullable('number'),
              balanceAfter: num,
              keyId: nullable('string'),
              ref: nullable('string'),
              what: nullable('string'),
              reason: nullable('string'),
              at: str,
            }),
          },
        }),
        Health: obj({
          status: { type: 'string', enum: ['ok', 'degraded'] },
          generation: str,
          computed_at: str,
          as_of: str,
          data_age_seconds: num,
          loaded_at: str,
          rows: int,
          platforms: strList,
          narratives: int,
          patterns: int,
          draining_generations: int,
          last_load_error: nullable('string'),
          ledger: obj({
            backend: { type: 'string', enum: ['file', 'postgres'] },
            last_seq: int,
            open_holds: int,
            recovered_ms: num,
            torn_tail_cut: bool,
          }),
          search: obj({
            answer_workers: int,
            worker_restarts: int,
            answer_cache: obj({ entries: int, bytes: int, hits: int, misses: int }),
          }),
          uptime_seconds: num,
        }),
      },
    },
  };
}

const ERROR_TEXT: Record<number, string> = {
  400: 'Invalid request: the message names the problem',
  402: 'Insufficient credits: nothing was charged',
  403: 'Missing, invalid or revoked x-api-key',
  404: 'Unknown id or route',
  409: 'A request with this Idempotency-Key is still in progress',
  405: 'Method not allowed on this path; Allow lists the methods that are',
  406: 'The MCP transport needs Accept: application/json, text/event-stream',
  415: 'A body sent as anything but Content-Type: application/json (curl -d sends application/x-www-form-urlencoded)',
  422: 'This Idempotency-Key was used with a different body',
  429: 'Rate limit exceeded; see Retry-After',
};
