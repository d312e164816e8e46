// `npm run bench -- jobs`: does search latency hold while asynchronous jobs run? The api bench's
// server and generation (bench/.cache/api-N); POST /search under the api bench's closed-loop load,
// alone and with two insights jobs always running (each finished job replaced at once by a new
// one: default depth for the window, a limit nudged per job so that none is a cache hit),
// alternated run by run so the machine's drift falls on both. Reports search p99 (and req/s) of
// each, the ratio, and the jobs' own figures. Bar (issue 7): p99 with jobs <= 1.5 x p99 alone.
import autocannon from 'autocannon';
import { INSIGHTS_DEPTH_DEFAULT } from '../../serve/jobs/job-request.ts';
import { runStamp, writeResultsJson, writeResultsSection } from '../results-file.ts';
import { ensureData, load, rssMiB, startServer, summary, type Server } from './api.ts';
import { queriesFrom, windowOf, type LabelledQuery } from './ranking.ts';
import { searchLoad } from '../lib/search-load.ts';

interface JobsBenchOptions {
  posts: number;
  seconds: number;
  connections: number;
  runs: number;
  command: string;
}

const median = (a: number[]) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)]!;

/** What the job drivers saw: each succeeded job's time from submit and records analysed, and the failures. */
interface JobStats {
  jobMs: number[];
  analysed: number[];
  failed: number;
}

/**
 * A driver keeping one insights job running until `stop.now`: submit, poll every 20 ms, submit the
 * next (default depth for the window, a limit nudged per job so that none is a cache hit).
 */
function jobDriver(server: Server, headers: Record<string, string>, queries: readonly LabelledQuery[], stats: JobStats) {
  let jobSeq = 0;
  return async (stop: { now: boolean }) => {
    while (!stop.now) {
      const i = jobSeq++;
      const window = windowOf(i % queries.length);
      const t0 = performance.now();
      const sub = await fetch(`${server.baseUrl}/intelligence/jobs`, {
        method: 'POST',
        headers,
        body: JSON.stringify({
          kind: 'insights',
          query: queries[i % queries.length]!.text,
          window,
          limit: INSIGHTS_DEPTH_DEFAULT[window] - (i % 500),
        }),
      });
      const job = (await sub.json()) as { jobId: string; status: string };
      let state = job.status;
      while (state !== 'succeeded' && state !== 'failed') {
        await new Promise((r) => setTimeout(r, 20));
        const got = (await (await fetch(`${server.baseUrl}/intelligence/jobs/${job.jobId}`, { headers })).json()) as {
          status: string;
          records: number | null;
        };
        state = got.status;
        if (state === 'succeeded') stats.analysed.push(got.records ?? 0);
      }
      if (state === 'failed') stats.failed++;
      else stats.jobMs.push(performance.now() - t0);
    }
  };
}

/** The RESULTS.md section of a run. */
function jobsReport(
  o: JobsBenchOptions,
  result: {
    date: string;
    machine: string;
    p99Alone: number;
    p99With: number;
    ratio: number;
    jobs: { completed: number; medianMs: number | null; medianAnalysed: number | null };
    rssMaxMiB: number;
  },
  alone: readonly autocannon.Result[],
  withJobs: readonly autocannon.Result[],
  failed: number,
): string {
  const f = (x: number) => Math.round(x).toLocaleString('en-US');
  const { p99Alone, p99With } = result;
  return `## Search latency while insights jobs run, at ${f(o.posts)} posts

Command: \`${o.command}\` — ${result.date.slice(0, 10)}, ${result.machine}. The api bench's server and generation; POST /search (limit 100, the ranking bench's queries, ${o.connections} connections, closed loop) for ${o.seconds} s alone, then ${o.seconds} s with two insights jobs always running (default depth, limits nudged so none is a cache hit; JOB_CONCURRENCY 2, one retrieval thread at nice 10), alternated ${o.runs} times; medians of the runs.

| | search alone | search with two insights jobs |
|---|---|---|
| p99 (every run) | **${f(p99Alone)} ms** (${alone.map((x) => x.latency.p99).join(', ')}) | **${f(p99With)} ms** (${withJobs.map((x) => x.latency.p99).join(', ')}) |
| p50 | ${f(median(alone.map((x) => x.latency.p50)))} ms | ${f(median(withJobs.map((x) => x.latency.p50)))} ms |
| req/s | ${f(median(alone.map((x) => x.requests.average)))} | ${f(median(withJobs.map((x) => x.requests.average)))} |

p99 with jobs / alone: **${result.ratio.toFixed(2)}x** (bar: at most 1.5x, ${result.ratio <= 1.5 ? 'met' : 'missed'}). Jobs completed during the loaded runs: ${result.jobs.completed} (failed ${failed}), median ${result.jobs.medianMs === null ? '-' : `${f(result.jobs.medianMs)} ms`} from submit to succeeded, median ${result.jobs.medianAnalysed ?? '-'} records analysed. Server RSS max sampled: ${f(result.rssMaxMiB)} MiB.`;
}

export async function benchJobs(o: JobsBenchOptions): Promise<void> {
  const { dir, truth } = await ensureData(o.posts);
  const queries = queriesFrom(truth, 400);
  const server = await startServer(dir);
  const pid = server.proc.pid!;
  const rss = { max: rssMiB(pid).rss };
  const headers = { 'x-api-key': server.key, 'content-type': 'application/json' };
  const searchOpts = searchLoad(server, o.connections, (i) => ({
    query: queries[i % queries.length]!.text,
    limit: 100,
    window: windowOf(i % queries.length),
  }));
  // Two drivers, each keeping one insights job running.
  const stats: JobStats = { jobMs: [], analysed: [], failed: 0 };
  const driver = jobDriver(server, headers, queries, stats);
  try {
    await load(searchOpts(3), pid, rss);
    const alone: autocannon.Result[] = [];
    const withJobs: autocannon.Result[] = [];
    for (let r = 0; r < o.runs; r++) {
      alone.push(await load(searchOpts(o.seconds), pid, rss));
      const stop = { now: false };
      const drivers = [driver(stop), driver(stop)];
      // Let both jobs start before the clock runs.
      await new Promise((res) => setTimeout(res, 500));
      withJobs.push(await load(searchOpts(o.seconds), pid, rss));
      stop.now = true;
      await Promise.all(drivers);
    }
    const { jobMs, analysed, failed } = stats;
    const p99Alone = median(alone.map((x) => x.latency.p99));
    const p99With = median(withJobs.map((x) => x.latency.p99));
    const result = {
      ...runStamp(o.command),
      posts: o.posts,
      connections: o.connections,
      seconds: o.seconds,
      runs: o.runs,
      alone: alone.map(summary),
      withJobs: withJobs.map(summary),
      p99Alone,
      p99With,
      ratio: p99With / p99Alone,
      jobs: {
        completed: jobMs.length,
        failed,
        medianMs: jobMs.length ? median(jobMs) : null,
        medianAnalysed: analysed.length ? median(analysed) : null,
      },
      rssMaxMiB: rss.max,
    };
    writeResultsJson(`jobs-${o.posts}`, result);
    const md = jobsReport(o, result, alone, withJobs, failed);
    writeResultsSection(`jobs-${o.posts}`, md);
    process.stdout.write(md + '\n');
  } finally {
    server.proc.kill('SIGTERM');
  }
}
