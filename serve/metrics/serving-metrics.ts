// What the server is serving, read at each scrape (nothing is counted on the request path): the
// generation and its age, the generations still draining, the last pipeline run (the file the
// runner leaves, core/pipeline-run.ts), the answer cache and the search workers.
import { Counter, Gauge, type Registry } from 'prom-client';
import { dataDirLayout } from '../../core/data-dir.ts';
import { readLastRun, type LastRun } from '../../core/pipeline-run.ts';
import type { SnapshotStore } from '../generation/snapshot-store.ts';
import type { AnswerCache } from '../search/answer-cache.ts';
import type { SearchPool } from '../search/search-pool.ts';

export interface ServingSources {
  snapshots: SnapshotStore;
  dataDir: string;
  answerCache: AnswerCache;
  searchPool: SearchPool | null;
}

const seconds = (iso: string) => Date.parse(iso) / 1000;

export function watchServing(registry: Registry, s: ServingSources): void {
  const registers = [registry];
  const gen = () => s.snapshots.generation;
  new Gauge({
    name: 'ci_generation_info',
    help: 'The generation served (value 1, its id in the generation label)',
    labelNames: ['generation'] as const,
    registers,
    collect() {
      this.reset();
      const g = gen();
      if (g) this.set({ generation: g.id }, 1);
    },
  });
  new Gauge({
    name: 'ci_generation_as_of_timestamp_seconds',
    help: "The served generation's as-of instant (the corpus as of then), Unix seconds",
    registers,
    collect() {
      const g = gen();
      if (g) this.set(seconds(g.manifest.as_of));
    },
  });
  new Gauge({
    name: 'ci_generation_age_seconds',
    help: "Seconds from the served generation's as-of instant to this scrape: how stale the served corpus is",
    registers,
    collect() {
      const g = gen();
      if (g) this.set(Date.now() / 1000 - seconds(g.manifest.as_of));
    },
  });
  new Gauge({
    name: 'ci_generation_posts',
    help: 'Posts the served generation answers from (deleted posts left out)',
    registers,
    collect() {
      const g = gen();
      if (g) this.set(g.posts);
    },
  });
  new Gauge({
    name: 'ci_generations_draining',
    help: 'Generations swapped out but still held by requests that started on them',
    registers,
    collect() {
      this.set(s.snapshots.draining);
    },
  });

  const layout = dataDirLayout(s.dataDir);
  // A scrape collects every metric at once: the pipeline gauges share one read of last-run.json.
  let reading: Promise<LastRun | null> | null = null;
  const lastRun = () =>
    (reading ??= readLastRun(layout)
      .catch(() => null)
      .finally(() => (reading = null)));
  new Gauge({
    name: 'ci_pipeline_last_run_stage_duration_seconds',
    help: "The last pipeline run's stages that finished, by stage, seconds",
    labelNames: ['stage'] as const,
    registers,
    async collect() {
      const run = await lastRun();
      this.reset();
      for (const st of run?.stages ?? []) this.set({ stage: st.stage }, st.ms / 1000);
    },
  });
  new Gauge({
    name: 'ci_pipeline_last_run_duration_seconds',
    help: 'The last pipeline run, start to end, seconds',
    registers,
    async collect() {
      const run = await lastRun();
      if (run) this.set(run.ms / 1000);
      else this.reset();
    },
  });
  new Gauge({
    name: 'ci_pipeline_last_run_finished_timestamp_seconds',
    help: 'When the last pipeline run ended (finished or failed), Unix seconds',
    registers,
    async collect() {
      const run = await lastRun();
      if (run) this.set(seconds(run.finished_at));
      else this.reset();
    },
  });
  new Gauge({
    name: 'ci_pipeline_last_run_success',
    help: 'Whether the last pipeline run finished (1) or failed or was abandoned (0); its mode (full, incremental) in the mode label',
    labelNames: ['mode'] as const,
    registers,
    async collect() {
      const run = await lastRun();
      this.reset();
      if (run) this.set({ mode: run.mode }, run.ok ? 1 : 0);
    },
  });

  const cache = s.answerCache;
  new Counter({
    name: 'ci_answer_cache_hits_total',
    help: 'Searches answered from the answer cache',
    registers,
    collect() {
      this.reset();
      this.inc(cache.hits);
    },
  });
  new Counter({
    name: 'ci_answer_cache_misses_total',
    help: 'Searches the answer cache did not hold (ranked afresh); none are counted while the cache is disabled (SEARCH_CACHE_MB=0)',
    registers,
    collect() {
      this.reset();
      this.inc(cache.misses);
    },
  });
  new Gauge({
    name: 'ci_answer_cache_bytes',
    help: "Bytes of the answers' JSON the answer cache holds",
    registers,
    collect() {
      this.set(cache.bytes);
    },
  });

  const pool = s.searchPool;
  if (!pool) return;
  new Gauge({
    name: 'ci_search_workers',
    help: 'Answer workers of the search pool (SEARCH_THREADS; the graph worker beside them is not counted)',
    registers,
    collect() {
      this.set(pool.threads);
    },
  });
  new Gauge({
    name: 'ci_search_worker_tasks_pending',
    help: 'Messages sent to the search workers and not answered yet (searches in flight, generations loading)',
    registers,
    collect() {
      this.set(pool.pending);
    },
  });
  new Counter({
    name: 'ci_search_worker_restarts_total',
    help: 'Search workers that died and were replaced',
    registers,
    collect() {
      this.reset();
      this.inc(pool.restarts);
    },
  });
}
