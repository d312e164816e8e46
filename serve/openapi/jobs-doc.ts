// The asynchronous jobs in the OpenAPI document (docs/jobs.md): the request from the route's own zod
// schema, the job as its routes answer it, and each kind's result.
import { toCredits } from '../../ledger/money.ts';
import { PRICES } from '../billing/prices.ts';
import { bodySchema } from '../http/query.ts';
import { idempotencyKeySchema } from '../http/idempotency-key.ts';
import { JOB_KINDS, jobBodySchema } from '../jobs/job-request.ts';
import { bool, errors, int, json, nullable, num, obj, pathParam, ref, str, unit, windowEnum, type Schema } from './schema-kit.ts';

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

export function jobPaths(): Record<string, Schema> {
  return {
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
          ...errors(400, 402, 403, 409, 415, 422, 429, 503),
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
  };
}

export function jobSchemas(): Record<string, Schema> {
  return {
    JobRequest: bodySchema(jobBodySchema),
    Job: job,
    ...jobResults,
  };
}
