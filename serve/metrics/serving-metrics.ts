// What the server is serving, read at each scrape (nothing is counted on the request path): the
// generation and its age, the generations still draining, the last pipeline run (the file the
// runner leaves, core/infra/pipeline-run.ts), the answer cache and the search workers.
import { Gauge, type Registry } from 'prom-client';
import { dataDirLayout } from '../../core/infra/data-dir.ts';
import { readLastRun, type LastRun } from '../../core/infra/pipeline-run.ts';
import type { SnapshotStore } from '../generation/snapshot-store.ts';
import type { AnswerCache } from '../search/answer-cache.ts';
import type { SearchPool } from '../search/search-pool.ts';
import { mirroredCounter, scrapedGauge } from './scraped.ts';

export interface ServingSources {
  snapshots: SnapshotStore;
  dataDir: string;
  answerCache: AnswerCache;
  searchPool: SearchPool | null;
}

const seconds = (iso: string) => Date.parse(iso) / 1000;

export function watchServing(registry: Registry, s: ServingSources): void {
  // Registered in this order, the order a scrape lists them in.
  generationGauges(registry, s.snapshots);
  pipelineGauges(registry, s.dataDir);
  answerCacheMetrics(registry, s.answerCache);
  if (s.searchPool) searchPoolMetrics(registry, s.searchPool);
}

/** The generation served: its id, as-of instant, age and posts, and the generations draining. */
function generationGauges(registry: Registry, snapshots: SnapshotStore): void {
  const gen = () => snapshots.generation;
  new Gauge({
    name: 'ci_generation_info',
    help: 'The generation served (value 1, its id in the generation label)',
    labelNames: ['generation'] as const,
    registers: [registry],
    collect() {
      this.reset();
      const g = gen();
      if (g) this.set({ generation: g.id }, 1);
    },
  });
  const asOfSeconds = () => {
    const g = gen();
    return g ? seconds(g.manifest.as_of) : null;
  };
  scrapedGauge(
    registry,
    'ci_generation_as_of_timestamp_seconds',
    "The served generation's as-of instant (the corpus as of then), Unix seconds",
    asOfSeconds,
  );
  scrapedGauge(
    registry,
    'ci_generation_age_seconds',
    "Seconds from the served generation's as-of instant to this scrape: how stale the served corpus is",
    () => {
      const t = asOfSeconds();
      return t === null ? null : Date.now() / 1000 - t;
    },
  );
  scrapedGauge(
    registry,
    'ci_generation_posts',
    'Posts the served generation answers from (deleted posts left out)',
    () => gen()?.posts ?? null,
  );
  const perWindow = (name: string, help: string, list: () => ReadonlyArray<{ window_key: string }>) =>
    new Gauge({
      name,
      help,
      labelNames: ['window'] as const,
      registers: [registry],
      collect() {
        this.reset();
        const counts = new Map<string, number>();
        for (const x of gen() ? list() : []) counts.set(x.window_key, (counts.get(x.window_key) ?? 0) + 1);
        for (const [window, n] of counts) this.set({ window }, n);
      },
    });
  perWindow('ci_narratives', "The served generation's narratives, by window", () => gen()!.maps.narratives.map((n) => n.narrative));
  perWindow('ci_themes', "The served generation's themes, by window", () => gen()!.maps.themes.map((t) => t.theme));
  scrapedGauge(
    registry,
    'ci_generations_draining',
    'Generations swapped out but still held by requests that started on them',
    () => snapshots.draining,
  );
}

/** The last pipeline run, from the file the runner leaves. */
function pipelineGauges(registry: Registry, dataDir: string): void {
  const layout = dataDirLayout(dataDir);
  // A scrape collects every metric at once: the pipeline gauges share one read of last-run.json.
  let reading: Promise<LastRun | null> | null = null;
  const lastRun = () =>
    (reading ??= readLastRun(layout)
      .catch(() => null)
      .finally(() => (reading = null)));
  /** A gauge of the last run with one label: a sample per (label value, value) it gives. */
  const lastRunGauge = (name: string, help: string, label: string, samples: (run: LastRun) => Array<[string, number]>) =>
    new Gauge({
      name,
      help,
      labelNames: [label],
      registers: [registry],
      async collect() {
        const run = await lastRun();
        this.reset();
        for (const [v, n] of run ? samples(run) : []) this.set({ [label]: v }, n);
      },
    });
  lastRunGauge(
    'ci_pipeline_last_run_stage_duration_seconds',
    "The last pipeline run's stages that finished, by stage, seconds",
    'stage',
    (run) => run.stages.map((st) => [st.stage, st.ms / 1000]),
  );
  lastRunGauge(
    'ci_pipeline_last_run_success',
    'Whether the last pipeline run finished (1) or failed or was abandoned (0); its mode (full, incremental) in the mode label',
    'mode',
    (run) => [[run.mode, run.ok ? 1 : 0]],
  );
  lastRunGauge(
    'ci_pipeline_last_run_quarantined_records',
    "Records the last run's ingest quarantined, by the field their first reason names (json, csv, unreadable: what the record was not)",
    'reason',
    (run) => Object.entries(run.ingest?.quarantined_by_reason ?? {}),
  );
  scrapedGauge(
    registry,
    'ci_pipeline_last_run_ingested_records',
    "Records the last run's ingest took in (new and updated posts)",
    async () => {
      const run = await lastRun();
      return run?.ingest ? run.ingest.ingested : null;
    },
  );
  scrapedGauge(registry, 'ci_pipeline_last_run_deleted_posts', "Stored posts the last run's ingest deleted", async () => {
    const run = await lastRun();
    return run?.ingest ? run.ingest.deleted : null;
  });
  scrapedGauge(registry, 'ci_pipeline_last_run_duration_seconds', 'The last pipeline run, start to end, seconds', async () => {
    const run = await lastRun();
    return run ? run.ms / 1000 : null;
  });
  scrapedGauge(
    registry,
    'ci_pipeline_last_run_finished_timestamp_seconds',
    'When the last pipeline run ended (finished or failed), Unix seconds',
    async () => {
      const run = await lastRun();
      return run ? seconds(run.finished_at) : null;
    },
  );
}

function answerCacheMetrics(registry: Registry, cache: AnswerCache): void {
  mirroredCounter(registry, 'ci_answer_cache_hits_total', 'Searches answered from the answer cache', () => cache.hits);
  mirroredCounter(
    registry,
    'ci_answer_cache_misses_total',
    'Searches the answer cache did not hold (ranked afresh); none are counted while the cache is disabled (SEARCH_CACHE_MB=0)',
    () => cache.misses,
  );
  scrapedGauge(registry, 'ci_answer_cache_bytes', "Bytes of the answers' JSON the answer cache holds", () => cache.bytes);
}

function searchPoolMetrics(registry: Registry, pool: SearchPool): void {
  scrapedGauge(
    registry,
    'ci_search_workers',
    'Answer workers of the search pool (SEARCH_THREADS; the graph worker beside them is not counted)',
    () => pool.threads,
  );
  scrapedGauge(
    registry,
    'ci_search_worker_tasks_pending',
    'Messages sent to the search workers and not answered yet (searches in flight, generations loading)',
    () => pool.pending,
  );
  mirroredCounter(registry, 'ci_search_worker_restarts_total', 'Search workers that died and were replaced', () => pool.restarts);
}
