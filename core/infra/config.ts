// Runtime configuration: environment variables with defaults, validated once at start so a
// typo fails with one clear line instead of a surprise deep inside a stage.
import path from 'node:path';
import { availableParallelism } from 'node:os';
import { z } from 'zod';

const cronMap = z.record(z.string(), z.string());

/**
 * The demo account's credits on the first start: the README's HTTP examples about 12 times. One pass
 * costs 14.59 on the demo corpus (the insights job 13.39 of it), 13.59 again (its search retry is an
 * idempotent replay), and the job first holds 46 (3,000 records x 0.015 + 1); 100 covered four
 * passes an hour apart. test/slow/readme-examples.test.ts runs five and measures them.
 */
export const DEFAULT_DEMO_CREDITS = 200;

/** A search's synchronous budget unless SEARCH_BUDGET_MS says otherwise. */
const SEARCH_BUDGET_MS_DEFAULT = 2000;

const schema = z.object({
  PORT: z.coerce.number().int().min(0).max(65535).default(8080),
  HOST: z.string().min(1).default('127.0.0.1'),
  DATA_DIR: z.string().min(1).default('./data'),
  SERVICE_PREFIX: z
    .string()
    .regex(/^(\/[A-Za-z0-9._~-]+)*$/, 'must be empty or like /api (no trailing slash)')
    .default('/api'),
  SEARCH_BUDGET_MS: z.coerce.number().int().positive().default(SEARCH_BUDGET_MS_DEFAULT),
  ADMIN_TOKEN: z.string().optional(),
  KEEP_GENERATIONS: z.coerce.number().int().min(1).default(5),
  /** JSON object: stage (or "run") -> node-cron expression. */
  PIPELINE_SCHEDULE: z
    .string()
    .default('{"run":"0 * * * *","full":"15 3 * * *"}')
    .transform((s, ctx) => {
      try {
        return cronMap.parse(JSON.parse(s));
      } catch {
        ctx.addIssue({ code: 'custom', message: 'must be a JSON object of stage -> cron expression' });
        return z.NEVER;
      }
    }),
  /** Expected dimension of precomputed embeddings in the input (else: the first one seen). */
  TEXT_EMBEDDING_DIM: z.coerce.number().int().min(2).max(4096).optional(),
  VISUAL_EMBEDDING_DIM: z.coerce.number().int().min(2).max(4096).optional(),
  /** JSON list of {name, aliases?} brands for brandProducts (default: a built-in list). */
  BRANDS_FILE: z.string().optional(),
  DEFAULT_CORPUS_POSTS: z.coerce.number().int().positive().default(20000),
  DEFAULT_CORPUS_SEED: z.coerce.number().int().default(42),
  DUCKDB_MEMORY_LIMIT: z.string().default('3GB'),
  DUCKDB_THREADS: z.coerce.number().int().positive().optional(),
  /** Worker threads of the features and index stages (default: the machine's cores). */
  PIPELINE_THREADS: z.coerce.number().int().positive().optional(),
  /** Rows of a time segment (pipeline/segments/segment-plan.ts): the head is sealed, and a full run cuts, once a segment holds this many. */
  SEGMENT_ROWS: z.coerce.number().int().positive().default(250_000),
  /**
   * Segments of at least this many rows get window tails where a window keeps less than half of
   * them (core/ranking/segment-graphs.ts); a smaller graph's filtered search is cheap anyway.
   */
  WINDOW_TAIL_MIN_ROWS: z.coerce.number().int().positive().default(20_000),
  /** Per API key: requests per second, and the burst allowed above it. */
  RATE_LIMIT_RPS: z.coerce.number().positive().default(100),
  RATE_LIMIT_BURST: z.coerce.number().int().positive().default(200),
  /** Where a 402 sends the caller to buy credits (default: the server's own instructions). */
  TOP_UP_URL: z.string().url().optional(),
  /** How often the server checks CURRENT for a new generation. */
  SNAPSHOT_CHECK_MS: z.coerce.number().int().positive().default(5000),
  /**
   * Before a new generation is swapped in, the most recent distinct searches the server answered
   * (at most this many) are answered on it first, one at a time on every answer worker, unbilled
   * (serve/search/swap-warm-up.ts): its rows' caches are filled and its answer cache starts with
   * their answers. 0: no warm-up.
   */
  SWAP_WARM_UP_SEARCHES: z.coerce.number().int().min(0).max(10_000).default(200),
  /** The longest a warm-up may delay a swap: the searches not replayed by then are left cold. */
  SWAP_WARM_UP_MS: z.coerce.number().int().min(0).max(600_000).default(5_000),
  /**
   * The nice value (0-19, Linux) of the thread that reads a new generation (and of DuckDB's threads
   * it starts), above the serving threads' 0: on busy cores a load yields to the searches.
   */
  LOADER_NICE: z.coerce.number().int().min(0).max(19).default(10),
  /**
   * Answer workers: threads that build search answers (ranking, clusters, narratives, JSON) over
   * the generation's shared memory, beside one graph worker that holds the HNSW graphs
   * (serve/search/search-pool.ts); 0: no workers, searches run on the main thread. Default: the
   * machine's cores. At 1M posts on 2 cores, two answer workers against one (full api bench runs,
   * 16 connections): planted 94 / 105 against 77 req/s, long queries 60 / 63 against 41, frequent
   * words 67 / 71 against 69 (with a p99 of 1.1 s against 0.35 s: the graph worker shares the cores
   * with both); short alternated runs gave one worker the edge on planted and frequent-word queries
   * (bench/RESULTS.md, api): on this machine the difference is within its run-to-run noise.
   */
  SEARCH_THREADS: z.coerce.number().int().min(0).max(64).default(availableParallelism()),
  /**
   * Memory for the answers of identical searches on the served generation, in MiB of their JSON
   * (serve/search/answer-cache.ts; least recently used out first, emptied on a generation swap);
   * 0: no cache. Billing is never cached.
   */
  SEARCH_CACHE_MB: z.coerce.number().int().min(0).max(65536).default(64),
  /**
   * Memory for the free map reads' answers (trending, narratives, themes, patterns), in MiB of their
   * JSON, keyed by the generation, path and query (serve/maps/read-cache.ts; least recently used out
   * first); 0: every read is built afresh.
   */
  READ_CACHE_MB: z.coerce.number().int().min(0).max(65536).default(32),
  /**
   * Searches the search workers hold at once, answering or waiting for one (serve/search/search-pool.ts);
   * one more is answered 503 with Retry-After, nothing held or charged. 256 is about SEARCH_BUDGET_MS's
   * worth at the 130-186 req/s of 1M posts on two cores (bench/RESULTS.md, api): a search queued past it
   * would wait longer than its budget. Not used with SEARCH_THREADS=0 (searches run on the main thread).
   */
  SEARCH_QUEUE_MAX: z.coerce.number().int().min(1).max(1_000_000).default(256),
  /** Visual pattern entries in POST /search answers (docs/api.md, "Pattern entry": switched off by default). */
  SEARCH_PATTERNS: z
    .enum(['on', 'off', 'true', 'false', '1', '0'])
    .default('off')
    .transform((v) => v === 'on' || v === 'true' || v === '1'),
  /** Asynchronous jobs running at once, and the retrieval threads they share (serve/jobs). */
  JOB_CONCURRENCY: z.coerce.number().int().min(1).max(64).default(2),
  JOB_THREADS: z.coerce.number().int().min(1).max(64).default(1),
  /** Jobs waiting at most in one process's queue (no DATABASE_URL); a submit past it is a 503 (0: every submit is). */
  JOB_QUEUE_MAX: z.coerce.number().int().min(0).default(1000),
  /** With DATABASE_URL: a job run not finished after this long is taken for dead and runs again on any replica. */
  JOB_EXPIRE_SECONDS: z.coerce.number().int().min(1).default(900),
  /** Finished jobs and their results are deleted this many days after they finished. */
  JOB_RETENTION_DAYS: z.coerce.number().positive().default(7),
  /** An OpenAI-compatible endpoint (base URL, e.g. http://host/v1) for the insights prose; unset: the template writer. */
  SUMMARY_API_URL: z.string().url().optional(),
  SUMMARY_API_KEY: z.string().optional(),
  SUMMARY_MODEL: z.string().default('gpt-4o-mini'),
  SUMMARY_TIMEOUT_MS: z.coerce.number().int().positive().default(20_000),
  /** Credits of the demo account created on the first start. */
  DEMO_CREDITS: z.coerce.number().int().min(0).default(DEFAULT_DEMO_CREDITS),
  // PostgreSQL for the ledger (and, with it, what replicas share): unset = the embedded file ledger in DATA_DIR/ledger.
  DATABASE_URL: z
    .string()
    .regex(/^postgres(ql)?:\/\//, 'DATABASE_URL must be a postgres:// or postgresql:// URL')
    .optional(),
  // A replica silent for this long is taken for dead: its holds are released (docs/scaling.md).
  LEDGER_LEASE_MS: z.coerce.number().int().min(1000).default(30_000),
  // With the ledger out of reach, a key found valid at most this long ago still reads the snapshot (docs/api.md); 0: never.
  KEY_VERDICT_SECONDS: z.coerce.number().int().min(0).max(86_400).default(900),
  /** {base_url} as clients reach it (a proxy's address), for links the server sends out (alert events); unset: where it listens. */
  PUBLIC_BASE_URL: z
    .string()
    .url('PUBLIC_BASE_URL must be an absolute URL, e.g. https://api.example.com/api')
    .transform((u) => u.replace(/\/+$/, ''))
    .optional(),
  // Alerts (docs/api.md, "Alerts"; docs/operations.md): watches per account, webhook deliveries.
  ALERTS_PER_ACCOUNT: z.coerce.number().int().min(0).default(100),
  /** 1: webhook URLs may name loopback and private addresses (tests, a receiver on the same network). */
  ALERTS_ALLOW_PRIVATE: z
    .enum(['0', '1'])
    .default('0')
    .transform((v) => v === '1'),
  /** The key every watch's signing secret derives from (replicas on several machines share it); unset: DATA_DIR/alerts/signing-key. */
  ALERTS_SIGNING_KEY: z.string().min(16, 'ALERTS_SIGNING_KEY must be at least 16 characters').optional(),
  /** A delivery attempt with no answer after this long is a failed attempt (retried). */
  ALERTS_TIMEOUT_MS: z.coerce.number().int().min(100).default(10_000),
  /** Retries of an event: the first after ALERTS_RETRY_BASE_MS, each wait doubling (at most an hour), for ALERTS_RETRY_WINDOW_MS. */
  ALERTS_RETRY_BASE_MS: z.coerce.number().int().min(10).default(10_000),
  ALERTS_RETRY_WINDOW_MS: z.coerce.number().int().min(1000).default(86_400_000),
  /** Deliveries in flight at once per process. */
  ALERTS_CONCURRENCY: z.coerce.number().int().min(1).max(256).default(16),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  /** One JSON line per request: on, off, or auto (on unless stdout is a terminal, where a person reads it). */
  ACCESS_LOG: z.enum(['auto', 'on', 'off']).default('auto'),
});

export type Config = z.infer<typeof schema> & { dataDir: string };

export class ConfigError extends Error {}

/** Parse configuration from an environment (process.env by default); throws ConfigError naming every bad variable. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const parsed = schema.safeParse(env);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `${i.path.join('.') || 'env'}: ${i.message}`);
    throw new ConfigError(`invalid configuration: ${lines.join('; ')}`);
  }
  return { ...parsed.data, dataDir: path.resolve(parsed.data.DATA_DIR) };
}
