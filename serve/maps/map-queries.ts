// The query parameters of the free map reads (docs/api.md, "Free reads"): the one definition the
// routes, the MCP tools and the OpenAPI document share (serve/http/query.ts).
import { z } from 'zod';
import { TRENDING_SORT_KEYS } from '../generation/trending-order.ts';
import { cursorField, intField, pageFields, windowField } from '../http/query.ts';

export const PATTERN_SORT_KEYS = ['contentCount', 'lateShare', 'confidence', 'totalEngagement', 'firstSeenAt'] as const;

/** A true/false query parameter (a JSON boolean from MCP, the text true or false from a URL). */
function booleanField(name: string) {
  return z.union([z.boolean(), z.enum(['true', 'false']).transform((v) => v === 'true')], { error: `${name} must be true or false` });
}

/** A map list's parameters (GET /narratives/trending, GET /themes: the same list rules). */
const mapListFields = {
  sort: z
    .enum(TRENDING_SORT_KEYS, { error: `sort must be one of ${TRENDING_SORT_KEYS.join(', ')}` })
    .default('burst')
    .describe(
      'burst_score (default: what happened first), momentum_score, emerging_score, volume (content_count) or engagement ' +
        '(total_engagement); ties by burst_score, then momentum_score, emerging_score, content_count, id',
    ),
  daily: booleanField('daily').default(false).describe('true: each item also carries daily_counts and period_change (for sparklines)'),
  window: windowField().default('30d').describe('7d, 30d, 90d or all; default 30d'),
  platform: z.string({ error: 'platform must be a string' }).min(1, 'platform must not be empty').optional(),
  ...pageFields(20, 100),
};

export const trendingQuery = z.object({
  ...mapListFields,
  // No default in the schema: with a theme, the theme's window is the default (the route applies both).
  window: windowField().optional().describe("7d, 30d, 90d or all; default 30d, or with theme the theme's window"),
  platform: mapListFields.platform.describe('only narratives with posts on this platform'),
  theme: z
    .string({ error: 'theme must be a string' })
    .min(1, 'theme must not be empty')
    .optional()
    .describe('only the narratives of this theme: its id or theme_key (GET /themes)'),
  spread: booleanField('spread')
    .default(true)
    .describe(
      "true (default): one event, one place: each theme's first narrative (in the sort order) comes before any theme's " +
        'second, every second before any third; false: the plain sort order',
    ),
});

export const themesQuery = z.object({
  ...mapListFields,
  platform: mapListFields.platform.describe('only themes with posts on this platform'),
});

export const narrativeSearchQuery = z.object({
  q: z
    .string({ error: 'q is required: the words to look for in narratives (labels, summaries, tags, posts)' })
    .trim()
    .min(1, 'q is required: the words to look for in narratives (labels, summaries, tags, posts)')
    .describe('words to look for'),
  window: windowField().optional().describe('only this window'),
  limit: intField('limit', 1, 100).default(20).describe('1..100, default 20'),
});

export const narrativeDetailQuery = z.object(pageFields(50, 500));

export const patternsBrowseQuery = z.object({
  scope: windowField('scope').default('30d').describe('7d, 30d, 90d or all; default 30d'),
  sort: z
    .enum(PATTERN_SORT_KEYS, { error: `sort must be one of ${PATTERN_SORT_KEYS.join(', ')}` })
    .default('contentCount')
    .describe('default contentCount'),
  limit: intField('limit', 1, 100).default(20).describe('1..100, default 20'),
  cursor: cursorField.optional(),
});

export const patternContentQuery = z.object({
  limit: intField('limit', 1, 500).default(50).describe('1..500, default 50'),
  cursor: cursorField.optional(),
});
