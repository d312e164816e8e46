// Narratives of real tweets at scale (part of `npm run bench -- quality`, --part tweets): the 68,778
// unlabelled TweetEval tweets of ../shared/data/tweeteval/corpus/ ingested as posts spread over the
// 90 days before as-of, the whole pipeline timed, and what a reader would see printed for a reader
// to judge: narratives per window, the labels of the 20 largest narratives of window all, and
// trending's top 10 of window 7d. There is no truth to score against: these are real posts.
import type { TrendingRow } from '../lib/story-figures.ts';
import fs from 'node:fs';
import path from 'node:path';
import { loadConfig } from '../../core/infra/config.ts';
import { dataDirLayout } from '../../core/infra/data-dir.ts';
import { openDuckDB, sqlString } from '../../core/infra/duckdb.ts';
import { TWEETEVAL_DIR } from '../../fixtures/tweeteval.ts';
import { generationDir, readCurrent } from '../../core/snapshots/generations.ts';
import { createLogger } from '../../core/infra/log.ts';
import { resolveStages, runStages } from '../../pipeline/run/runner.ts';
import { trendingOrder } from '../../serve/maps/narrative-routes.ts';
import { everydayTexts } from '../../fixtures/crisislex.ts';

const ROOT = path.resolve(import.meta.dirname, '..', '..');
const AS_OF = '2026-11-01T00:00:00.000Z';
const SPREAD_MINUTES = 90 * 24 * 60;

/** The corpus tweets as ingestable posts, spread evenly (and deterministically) over 90 days. */
export function corpusTweets(dir = path.join(TWEETEVAL_DIR, 'corpus')): Array<Record<string, unknown>> {
  return everydayTexts(dir).map(({ key, text }, n) => ({
    uuid: `tweet-${key}`,
    platform: 'x',
    published_at: new Date(Date.parse(AS_OF) - (((n * 7919) % SPREAD_MINUTES) + 1) * 60_000).toISOString(),
    description: text,
    creator_id: 1 + ((n * 31) % 20_011),
  }));
}

type Row = TrendingRow & { [column: string]: unknown; lifecycle: string };

interface TweetsQuality {
  posts: number;
  ms: number;
  stageMs: Record<string, number>;
  windows: Array<{ window: string; narratives: number; members: number }>;
  largest: Row[];
  trending: Row[];
}

async function measureTweetNarratives(): Promise<TweetsQuality> {
  const dataDir = path.join(ROOT, 'bench', '.cache', 'tweets');
  fs.rmSync(dataDir, { recursive: true, force: true });
  fs.mkdirSync(path.join(dataDir, 'landing'), { recursive: true });
  const posts = corpusTweets();
  fs.writeFileSync(path.join(dataDir, 'landing', 'tweets.ndjson'), posts.map((p) => JSON.stringify(p)).join('\n') + '\n');
  const t0 = performance.now();
  const config = loadConfig({ ...process.env, DATA_DIR: dataDir, LOG_LEVEL: 'silent' });
  const run = await runStages(resolveStages(['run']), { config, log: createLogger('bench', 'silent'), asOf: new Date(AS_OF), tty: false });
  const ms = performance.now() - t0;
  const layout = dataDirLayout(dataDir);
  const dir = generationDir(layout, (await readCurrent(layout))!);
  const db = await openDuckDB();
  try {
    const f = (n: string) => sqlString(path.join(dir, n));
    const rows = (
      await db.all<Row>(
        `SELECT id, window_key, label, content_count::INTEGER AS content_count, momentum_score, emerging_score, burst_score, lifecycle FROM read_parquet(${f('narratives.parquet')})`,
      )
    ).map((r) => ({ ...r, content_count: Number(r.content_count) }));
    const [{ n }] = (await db.all<{ n: number }>(`SELECT count(*)::INTEGER AS n FROM read_parquet(${f('posts.parquet')})`)) as [
      { n: number },
    ];
    const windows = ['7d', '30d', '90d', 'all'].map((w) => {
      const of = rows.filter((r) => r.window_key === w);
      return { window: w, narratives: of.length, members: of.reduce((a, r) => a + r.content_count, 0) };
    });
    return {
      posts: Number(n),
      ms,
      stageMs: Object.fromEntries(run.stages.map((s) => [s.stage, s.ms])),
      windows,
      largest: rows
        .filter((r) => r.window_key === 'all')
        .sort((a, b) => b.content_count - a.content_count)
        .slice(0, 20),
      trending: rows
        .filter((r) => r.window_key === '7d')
        .sort(trendingOrder)
        .slice(0, 10),
    };
  } finally {
    db.close();
  }
}

export async function benchQualityTweets(o: { command: string }): Promise<void> {
  const { machine, writeResultsJson, writeResultsSection } = await import('../results-file.ts');
  const q = await measureTweetNarratives();
  const result = { date: new Date().toISOString(), machine: machine(), command: o.command, ...q };
  writeResultsJson('quality-tweets', result);
  const cell = (s: string) => s.replace(/\|/g, '\\|');
  const md = `## Narratives of real tweets: the TweetEval corpus

Command: \`${o.command}\` — ${result.date.slice(0, 10)}, ${result.machine}. The ${q.posts.toLocaleString('en-US')} unlabelled tweets of \`tweeteval/corpus/\` (emoji, hate, irony, offensive train texts) ingested as posts spread over the 90 days before ${AS_OF}, the whole pipeline: **${(q.ms / 1000).toFixed(1)} s** (${Object.entries(
    q.stageMs,
  )
    .map(([k, v]) => `${k} ${(v / 1000).toFixed(1)} s`)
    .join(', ')}). No truth exists for these posts: the labels are printed for a reader to judge.

| window | narratives | posts in a narrative |
|---|---|---|
${q.windows.map((w) => `| ${w.window} | ${w.narratives} | ${w.members.toLocaleString('en-US')} (${((100 * w.members) / Math.max(1, q.posts)).toFixed(1)}% of all posts) |`).join('\n')}

The 20 largest narratives of window all:

| label | posts | lifecycle |
|---|---|---|
${q.largest.map((r) => `| ${cell(r.label)} | ${r.content_count} | ${r.lifecycle} |`).join('\n')}

Trending's top 10 in window 7d (GET /narratives/trending's order):

| label | posts | momentum |
|---|---|---|
${q.trending.map((r) => `| ${cell(r.label)} | ${r.content_count} | ${r.momentum_score.toFixed(2)} |`).join('\n')}`;
  writeResultsSection('quality-tweets', md);
  process.stdout.write(md + '\n');
}
