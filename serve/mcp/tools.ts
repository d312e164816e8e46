// The MCP tools: one per HTTP capability, their input schemas the HTTP side's own zod schemas (the
// bodies, the query parameters; path parameters added as arguments), and
// what each costs in its description. A tool is carried out as the HTTP call it mirrors, made to
// this server with the caller's own key, so billing, holds, refunds, ledger entries, idempotency
// and errors are those of the HTTP API by construction, not by a second implementation.
import { z } from 'zod';
import { usageQuery } from '../account/account-queries.ts';
import { deliveriesQuery, redeliverParams } from '../alerts/delivery-routes.ts';
import { watchIdField } from '../alerts/watch-schema.ts';
import { watchBodySchema } from '../alerts/watch-schema.ts';
import { idempotencyKeySchema } from '../http/idempotency-key.ts';
import { toCredits, timesMicro, type Micro } from '../../ledger/money.ts';
import { creditsWord, PRICES } from '../billing/prices.ts';
import { INSIGHTS_DEPTH_DEFAULT, jobBodySchema, JOB_LIMIT_MAX, RECORDS_LIMIT_DEFAULT } from '../jobs/job-request.ts';
import {
  narrativeDetailQuery,
  narrativeSearchQuery,
  patternContentQuery,
  patternsBrowseQuery,
  themesQuery,
  trendingQuery,
} from '../maps/map-queries.ts';
import { relatedNarrativesQuery } from '../maps/related-narratives.ts';
import { searchBodySchema, SEARCH_LIMIT_DEFAULT } from '../search/search-body.ts';

const idempotencyKey = idempotencyKeySchema
  .optional()
  .describe('Idempotency-Key: a retry with the same key and arguments returns the original result and charge');
const id = (what: string) => z.string().min(1).describe(what);

export interface ToolDef {
  name: string;
  description: string;
  input: z.ZodObject;
  /** The HTTP call the tool is: method, path (with the arguments it takes) and body. */
  http: (args: Record<string, any>) => {
    method: 'GET' | 'POST' | 'DELETE';
    path: string;
    body?: unknown;
    headers?: Record<string, string>;
  };
}

/** A path with the given query parameters (undefined ones left out). */
function withQuery(path: string, q: Record<string, unknown>): string {
  const s = new URLSearchParams();
  for (const [k, v] of Object.entries(q)) if (v !== undefined && v !== null) s.set(k, String(v));
  const text = s.toString();
  return text ? `${path}?${text}` : path;
}

const enc = encodeURIComponent;
const idem = (key: string | undefined) => (key ? { 'Idempotency-Key': key } : undefined);

// The costs the descriptions state, from the price table (billing/prices.ts) and the default limits.
const ROW = toCredits(PRICES.record);
const INSIGHT = toCredits(PRICES.insightRecord);
const [DEPTH_7D, DEPTH_ELSE] = [INSIGHTS_DEPTH_DEFAULT['7d'], INSIGHTS_DEPTH_DEFAULT['30d']];
const atMost = (each: Micro, count: number) => toCredits(timesMicro(each, count));
const thousands = (n: number) => n.toLocaleString('en-US');

export const TOOLS: ToolDef[] = [
  {
    name: 'search',
    description:
      'Hybrid search of the live corpus (POST /search): ranked content rows with their creators ' +
      `and narratives. COST: ${ROW} credits per row returned (the call holds limit x ${ROW} first; ` +
      `default limit ${SEARCH_LIMIT_DEFAULT}, so at most ${creditsWord(atMost(PRICES.record, SEARCH_LIMIT_DEFAULT))}); ` +
      'an empty answer is free. A search over the time ' +
      'budget is handed to an insights job instead (status 202 with jobId).',
    input: searchBodySchema.extend({ idempotencyKey }),
    http: ({ idempotencyKey: key, ...body }) => ({ method: 'POST', path: '/search', body, headers: idem(key) }),
  },
  {
    name: 'narratives_trending',
    description:
      'Trending narratives of a window, by burst (what happened, above steady talk; one theme one place unless spread=false) or by ' +
      'momentum, emergence, volume or engagement; with daily=true their daily counts ' +
      'and change against the previous period; with theme, only that theme’s narratives (GET /narratives/trending). Free.',
    input: trendingQuery.strict(),
    http: (a) => ({ method: 'GET', path: withQuery('/narratives/trending', a) }),
  },
  {
    name: 'themes_list',
    description:
      "A window's themes (events and subjects: its narratives grouped), each with its narratives, by burst or by momentum, emergence, " +
      'volume or engagement; with daily=true their daily counts and change against the previous period (GET /themes). Free.',
    input: themesQuery.strict(),
    http: (a) => ({ method: 'GET', path: withQuery('/themes', a) }),
  },
  {
    name: 'theme_get',
    description:
      'One theme with its narratives in full and the posts a reader opens first (GET /themes/{id}); a theme id or its stable theme_key. Free.',
    input: z.strictObject({ id: id('a theme id or theme_key') }),
    http: ({ id }) => ({ method: 'GET', path: `/themes/${enc(id)}` }),
  },
  {
    name: 'narratives_search',
    description: 'Search narratives by their labels, summaries, tags and the words of their posts (GET /narratives/search). Free.',
    input: narrativeSearchQuery.strict(),
    http: (a) => ({ method: 'GET', path: withQuery('/narratives/search', a) }),
  },
  {
    name: 'narrative_get',
    description:
      'One narrative: the posts a reader opens first (no slurs, no text twice), its posts (paged), creators and platform split ' +
      '(GET /narratives/{id}); emergent ids from searches stay readable for an hour. Free.',
    input: z.strictObject({ id: id('a narrative id, narrative_key or emergent id'), ...narrativeDetailQuery.shape }),
    http: ({ id, ...q }) => ({ method: 'GET', path: withQuery(`/narratives/${enc(id)}`, q) }),
  },
  {
    name: 'narrative_trajectory',
    description:
      "A narrative's daily series and its metrics across generations (GET /narratives/{id}/trajectory); any id narrative_get reads, a narrative_key too. Free.",
    input: z.strictObject({ id: id('a narrative id, narrative_key or emergent id') }),
    http: ({ id }) => ({ method: 'GET', path: `/narratives/${enc(id)}/trajectory` }),
  },
  {
    name: 'narrative_related',
    description:
      'Narratives of the same window about the same thing, by cosine of their text centroids (GET /narratives/{id}/related); any id narrative_get reads. Free.',
    input: z.strictObject({ id: id('a narrative id, narrative_key or emergent id'), ...relatedNarrativesQuery.shape }),
    http: ({ id, ...q }) => ({ method: 'GET', path: withQuery(`/narratives/${enc(id)}/related`, q) }),
  },
  {
    name: 'patterns_browse',
    description: 'Browse the visual pattern map (GET /intelligence/patterns), sorted, with a cursor. Free.',
    input: patternsBrowseQuery.strict(),
    http: (a) => ({ method: 'GET', path: withQuery('/intelligence/patterns', a) }),
  },
  {
    name: 'pattern_get',
    description: 'One visual pattern with its representative posts and lookalikes (GET /intelligence/patterns/{patternKey}). Free.',
    input: z.strictObject({ patternKey: id('a pattern key') }),
    http: ({ patternKey }) => ({ method: 'GET', path: `/intelligence/patterns/${enc(patternKey)}` }),
  },
  {
    name: 'pattern_content',
    description: "A pattern's posts, most central first (GET /intelligence/patterns/{patternKey}/content). Free.",
    input: z.strictObject({ patternKey: id('a pattern key'), ...patternContentQuery.shape }),
    http: ({ patternKey, ...q }) => ({ method: 'GET', path: withQuery(`/intelligence/patterns/${enc(patternKey)}/content`, q) }),
  },
  {
    name: 'pattern_lookalikes',
    description: 'Patterns that look like this one (GET /intelligence/patterns/{patternKey}/lookalikes). Free.',
    input: z.strictObject({ patternKey: id('a pattern key') }),
    http: ({ patternKey }) => ({ method: 'GET', path: `/intelligence/patterns/${enc(patternKey)}/lookalikes` }),
  },
  {
    name: 'job_submit',
    description:
      `Submit an asynchronous job (POST /intelligence/jobs); poll it with job_get. COSTS: ` +
      `records ${ROW} credits per row returned (limit up to ${JOB_LIMIT_MAX}, default ${RECORDS_LIMIT_DEFAULT}: at ` +
      `most ${creditsWord(atMost(PRICES.record, RECORDS_LIMIT_DEFAULT))}); insights ${INSIGHT} per record analysed ` +
      `(default depth ${thousands(DEPTH_7D)} for 7d, ${thousands(DEPTH_ELSE)} ` +
      `otherwise: at most ${atMost(PRICES.insightRecord, DEPTH_7D)} or ${creditsWord(atMost(PRICES.insightRecord, DEPTH_ELSE))}), ` +
      `+${creditsWord(toCredits(PRICES.signals))} with includeSignals; patterns ` +
      `${creditsWord(toCredits(PRICES.patterns))}; stats ${creditsWord(toCredits(PRICES.stats))}. The most it can cost is held at submit (estimated_cost); a ` +
      `failed job is refunded. Identical requests are answered from a cache (records 15 min, ` +
      `insights 1 h, at full price; patterns and stats until 00:00 UTC, free for the account ` +
      `that paid).`,
    input: jobBodySchema.extend({ idempotencyKey }),
    http: ({ idempotencyKey: key, ...body }) => ({ method: 'POST', path: '/intelligence/jobs', body, headers: idem(key) }),
  },
  {
    name: 'job_get',
    description:
      "A job's state (queued, running, succeeded with its result and charge, or failed and refunded) (GET /intelligence/jobs/{id}). Free.",
    input: z.strictObject({ jobId: id('a job id') }),
    http: ({ jobId }) => ({ method: 'GET', path: `/intelligence/jobs/${enc(jobId)}` }),
  },
  {
    name: 'usage',
    description: "The account's credit ledger, newest first: top-ups, settlements and refunds, with the balance (GET /usage). Free.",
    input: usageQuery.strict(),
    http: (a) => ({ method: 'GET', path: withQuery('/usage', a) }),
  },
  {
    name: 'billing_top_up',
    description: 'How credits are added to this account (GET /billing/top-up; the topUpUrl of a 402 points here by default). Free.',
    input: z.strictObject({}),
    http: () => ({ method: 'GET', path: '/billing/top-up' }),
  },
  {
    name: 'billing_prices',
    description:
      'What each billed call costs in credits; a search holds limit x search.per_record before it runs (GET /billing/prices). Free.',
    input: z.strictObject({}),
    http: () => ({ method: 'GET', path: '/billing/prices' }),
  },
  {
    name: 'media_list',
    description:
      "A post's media: local files with the path of their thumbnail under the API, remote ones with their url (GET /media/{uuid}). Free.",
    input: z.strictObject({ uuid: id("the post's uuid") }),
    http: ({ uuid }) => ({ method: 'GET', path: `/media/${enc(uuid)}` }),
  },
  {
    name: 'alerts_create',
    description:
      'Watch narratives and be told by webhook when they move (POST /alerts): a target (a map-search query, a narrative, a theme, ' +
      'or any narrative), windows, conditions (spike, lifecycle change, momentum crossing a level, new narrative) and the URL ' +
      'events are POSTed to, signed with the secret this answer shows once. Free.',
    input: watchBodySchema,
    http: (body) => ({ method: 'POST', path: '/alerts', body }),
  },
  {
    name: 'alerts_list',
    description: "The account's watches with their paused state (GET /alerts). Free.",
    input: z.strictObject({}),
    http: () => ({ method: 'GET', path: '/alerts' }),
  },
  {
    name: 'alerts_get',
    description:
      'One watch with its last 10 events (one per story and generation, listing the conditions and windows it covers) ' +
      'and where their delivery stands (GET /alerts/{id}). Free.',
    input: z.strictObject({ id: watchIdField }),
    http: ({ id }) => ({ method: 'GET', path: `/alerts/${enc(id)}` }),
  },
  {
    name: 'alerts_delete',
    description: 'Delete a watch and its events; nothing more is delivered for it (DELETE /alerts/{id}). Free.',
    input: z.strictObject({ id: watchIdField }),
    http: ({ id }) => ({ method: 'DELETE', path: `/alerts/${enc(id)}` }),
  },
  {
    name: 'alerts_deliveries',
    description:
      "A watch's delivery log, newest first: each attempt's HTTP status, error, latency and outcome (delivered, retry, gave_up), " +
      'and whether the watch is paused (GET /alerts/{id}/deliveries). Free.',
    input: deliveriesQuery.extend({ id: watchIdField }).strict(),
    http: ({ id, ...q }) => ({ method: 'GET', path: withQuery(`/alerts/${enc(id)}/deliveries`, q) }),
  },
  {
    name: 'alerts_redeliver',
    description:
      "Send one of a watch's events again now, whatever its state; the receiver de-duplicates by its event id " +
      '(POST /alerts/{id}/events/{event_id}/redeliver). A paused watch answers 409: resume it instead (POST /alerts/{id}/resume). Free.',
    input: redeliverParams.strict(),
    http: ({ id, event_id }) => ({ method: 'POST', path: `/alerts/${enc(id)}/events/${enc(event_id)}/redeliver` }),
  },
  {
    name: 'health',
    description: 'Service status and data freshness: the generation served, its age, the ledger (GET /health). Free.',
    input: z.strictObject({}),
    http: () => ({ method: 'GET', path: '/health' }),
  },
];
