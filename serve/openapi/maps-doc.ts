// The free map reads in the OpenAPI document (docs/api.md, "Free reads"): narratives, themes and
// visual patterns, their query parameters from the routes' own zod schemas.
import { TRENDING_SORT_KEYS } from '../generation/trending-order.ts';
import { queryParameters } from '../http/query.ts';
import {
  narrativeDetailQuery,
  narrativeSearchQuery,
  patternContentQuery,
  patternsBrowseQuery,
  themesQuery,
  trendingQuery,
} from '../maps/map-queries.ts';
import { relatedNarrativesQuery } from '../maps/related-narratives.ts';
import {
  bool,
  int,
  json,
  nonNegative,
  nullable,
  num,
  obj,
  paged,
  pathParam,
  readErrors,
  ref,
  str,
  unit,
  windowEnum,
  type Schema,
} from './schema-kit.ts';
import { handle, lifecycle, narrative, theme } from './shared-schemas.ts';
import { CENTRAL_POSTS } from '../../core/maps/central-posts.ts';

/** A page of a map list (GET /narratives/trending, GET /themes): the same paging and sort keys. */
const mapList = (items: Schema, more: Record<string, Schema> = {}) =>
  paged(items, {
    ...more,
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
      items: obj({
        id: str,
        narrative_key: nullable('string'),
        label: str,
        content_count: int,
        momentum_score: unit,
        burst_score: nonNegative,
        lifecycle,
      }),
    },
    daily_counts: { type: 'array', items: int },
    period_change: periodChange,
  },
};
const stanceShares = nullable(obj({ critical: unit, mixed: unit, neutral: unit, supportive: unit }));
/** The posts a reader opens first (docs/fields.md, central_content_uuids): a narrative's or a theme's detail. */
const centralPosts: Schema = {
  type: 'array',
  items: ref('StoredContent'),
  maxItems: CENTRAL_POSTS,
  description:
    'the posts a reader opens first: members most central first, without what the abuse lexicon flags and without a text shown before ' +
    `(a retweet and its original are one); at most ${CENTRAL_POSTS}`,
};

/** How an id that was not the narrative's own current id was resolved (docs/api.md, "Ids a client can keep"). */
const resolvedBy = { requested_id: str, resolved_by: { type: 'string', enum: ['narrative_key', 'earlier_generation_id'] } };

export function mapPaths(): Record<string, Schema> {
  return {
    '/narratives/trending': {
      get: {
        summary:
          'Narratives of a window by burst (what happened first, spread over themes), or by momentum, emergence, volume or engagement (free)',
        parameters: queryParameters(trendingQuery),
        responses: {
          200: json(
            ref('NarrativeList'),
            'Narratives, by the sort key, then burst_score, momentum_score, emerging_score, content_count, id; spread over themes unless spread=false',
          ),
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
          200: json(ref('ThemeList'), 'Themes, by the sort key, then burst_score, momentum_score, emerging_score, content_count, id'),
          ...readErrors,
        },
      },
    },
    '/themes/{id}': {
      get: {
        summary: 'One theme with its narratives and the posts a reader opens first (free); the id may be a current theme id or a theme_key',
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
          'One narrative: the posts a reader opens first, all its posts (paged), creators, platform split (free). The id may be a current id, a ' +
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
        parameters: [pathParam('id', 'narrative id, narrative_key, earlier id or emergent id'), ...queryParameters(relatedNarrativesQuery)],
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
  };
}

export function mapSchemas(): Record<string, Schema> {
  return {
    NarrativeList: mapList(trendingItem, {
      spread: { ...bool, description: 'whether the page is spread over themes (the spread parameter; false with theme)' },
    }),
    ThemeList: mapList(themeItem),
    ThemeDetail: obj(
      {
        generation: str,
        theme: ref('Theme'),
        daily_counts: { type: 'array', items: int },
        central_posts: centralPosts,
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
        central_posts: centralPosts,
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
  };
}
