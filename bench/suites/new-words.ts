// `npm run bench -- new-words`: does search know new words as soon as an incremental run has
// published them (issue 37)? On a corpus (the fixture generator's posts, or real TweetEval tweets),
// a full run; then three stories with invented names (fixtures/new-word-stories.ts, 20 posts each)
// arrive through an incremental run; their 12 queries are asked of the ranking core; then
// `run --full` on the same data (the embedder refitted, the names now in its fit) and the same
// queries again. precision@20 = the story's posts among the first 20 rows / 20; rows billed = the
// rows a search with limit 100 returns (each billed). The bars (issue 46): after the incremental
// run, every query's precision within 0.05 of after the full run, and its rows billed at most 1.2x.
import fs from 'node:fs';
import path from 'node:path';
import { loadConfig } from '../../core/infra/config.ts';
import { dataDirLayout } from '../../core/infra/data-dir.ts';
import { generationDir, readCurrent } from '../../core/snapshots/generations.ts';
import { createLogger } from '../../core/infra/log.ts';
import { loadSearchIndex } from '../../core/ranking/search-index.ts';
import { search } from '../../core/ranking/search.ts';
import type { WindowKey } from '../../core/snapshots/windows.ts';
import { generateCorpus } from '../../fixtures/generate.ts';
import { allStoryPosts, NEW_WORD_STORIES } from '../../fixtures/new-word-stories.ts';
import { resolveStages, runStages } from '../../pipeline/run/runner.ts';
import { runStamp, writeResultsJson, writeResultsSection } from '../results-file.ts';
import { corpusTweets } from './quality-tweets.ts';

const ROOT = path.resolve(import.meta.dirname, '..', '..');
const AS_OF = new Date('2026-11-01T00:00:00.000Z');
/** The incremental run (and the full one after it): three hours after the first. */
const LATER = new Date(AS_OF.getTime() + 3 * 3_600_000);
const K = 20;
/** The limit of the billing probe: a search's rows up to it are billed, a row each. */
const BILLED_LIMIT = 100;
const WINDOWS: WindowKey[] = ['7d', '30d'];

export type NewWordsCorpus = 'fixture' | 'tweets';

interface QueryResult {
  story: string;
  query: string;
  window: WindowKey;
  incremental: number;
  full: number;
  /** Rows a search with limit BILLED_LIMIT returned (billed), after each run. */
  billedIncremental: number;
  billedFull: number;
  /** The first row after the incremental run that is not the story's (rank, text), if any in the first 20. */
  firstStranger: string | null;
}

interface NewWordsResult {
  corpus: NewWordsCorpus;
  posts: number;
  mode: string;
  queries: QueryResult[];
  meanIncremental: number;
  meanFull: number;
  /** The largest |full - incremental| precision of one query, and the largest incremental / full rows billed. */
  worstDifference: number;
  worstBilledRatio: number;
  ms: { base: number; incremental: number; full: number };
}

async function run(dataDir: string, full: boolean, asOf: Date): Promise<{ ms: number; mode: string }> {
  const config = loadConfig({ ...process.env, DATA_DIR: dataDir, LOG_LEVEL: 'silent' });
  const t0 = performance.now();
  const r = await runStages(resolveStages(['run']), { config, log: createLogger('bench', 'silent'), asOf, tty: false, full });
  const features = r.stages.find((s) => s.stage === 'features');
  return { ms: performance.now() - t0, mode: String(features?.summary.mode ?? '?') };
}

/** precision@K of every story query over the served generation, and each answer's first stranger. */
async function precisions(dataDir: string): Promise<Array<{ p: number; billed: number; stranger: string | null }>> {
  const layout = dataDirLayout(dataDir);
  const index = await loadSearchIndex(generationDir(layout, (await readCurrent(layout))!), { enrichment: false });
  const text = new Map(allStoryPosts(AS_OF).map((p) => [p.uuid, p.description]));
  const out: Array<{ p: number; billed: number; stranger: string | null }> = [];
  for (const story of NEW_WORD_STORIES)
    for (const query of story.queries)
      for (const window of WINDOWS) {
        const rows = search(index, { query, limit: K, window });
        const own = rows.filter((r) => r.uuid.startsWith(`story-${story.key}-`)).length;
        const i = rows.findIndex((r) => !r.uuid.startsWith(`story-${story.key}-`));
        out.push({
          p: own / K,
          billed: search(index, { query, limit: BILLED_LIMIT, window }).length,
          stranger: i >= 0 && i < K ? `#${i + 1} ${rows[i]!.uuid}${text.has(rows[i]!.uuid) ? ` "${text.get(rows[i]!.uuid)}"` : ''}` : null,
        });
      }
  return out;
}

async function measureNewWords(corpus: NewWordsCorpus, posts: number): Promise<NewWordsResult> {
  const dataDir = path.join(ROOT, 'bench', '.cache', `new-words-${corpus}`);
  fs.rmSync(dataDir, { recursive: true, force: true });
  const landing = path.join(dataDir, 'landing');
  fs.mkdirSync(landing, { recursive: true });
  if (corpus === 'fixture') {
    await generateCorpus({ posts, outDir: landing, asOf: AS_OF, media: false, seed: 42 });
  } else {
    const tweets = corpusTweets().slice(0, posts);
    fs.writeFileSync(path.join(landing, 'tweets.ndjson'), tweets.map((p) => JSON.stringify(p)).join('\n') + '\n');
  }
  const base = await run(dataDir, true, AS_OF);
  fs.writeFileSync(
    path.join(landing, 'stories.ndjson'),
    allStoryPosts(AS_OF)
      .map((p) => JSON.stringify(p))
      .join('\n') + '\n',
  );
  const incremental = await run(dataDir, false, LATER);
  const afterIncremental = await precisions(dataDir);
  const full = await run(dataDir, true, LATER);
  const afterFull = await precisions(dataDir);
  const queries: QueryResult[] = [];
  let i = 0;
  for (const story of NEW_WORD_STORIES)
    for (const query of story.queries)
      for (const window of WINDOWS) {
        queries.push({
          story: story.name,
          query,
          window,
          incremental: afterIncremental[i]!.p,
          full: afterFull[i]!.p,
          billedIncremental: afterIncremental[i]!.billed,
          billedFull: afterFull[i]!.billed,
          firstStranger: afterIncremental[i]!.stranger,
        });
        i++;
      }
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  return {
    corpus,
    posts,
    mode: incremental.mode,
    queries,
    meanIncremental: mean(queries.map((q) => q.incremental)),
    meanFull: mean(queries.map((q) => q.full)),
    worstDifference: Math.max(...queries.map((q) => Math.abs(q.full - q.incremental))),
    worstBilledRatio: Math.max(...queries.map((q) => q.billedIncremental / Math.max(1, q.billedFull))),
    ms: { base: base.ms, incremental: incremental.ms, full: full.ms },
  };
}

export async function benchNewWords(opts: { corpora: NewWordsCorpus[]; posts: number; command: string }): Promise<void> {
  const results: NewWordsResult[] = [];
  for (const corpus of opts.corpora) {
    const r = await measureNewWords(corpus, opts.posts);
    results.push(r);
    process.stdout.write(
      `${corpus} (${r.posts} posts, incremental run: ${r.mode}): mean precision@${K} ${r.meanIncremental.toFixed(3)} after the incremental run, ` +
        `${r.meanFull.toFixed(3)} after run --full (difference ${(r.meanFull - r.meanIncremental).toFixed(3)}; ` +
        `worst query ${r.worstDifference.toFixed(2)}; rows billed at limit ${BILLED_LIMIT}: worst ${r.worstBilledRatio.toFixed(2)}x the full run's)\n`,
    );
    for (const q of r.queries)
      process.stdout.write(
        `  ${q.window.padEnd(3)} ${q.query.padEnd(42)} ${q.incremental.toFixed(2)} ${q.full.toFixed(2)} billed ${q.billedIncremental}/${q.billedFull}${q.firstStranger ? `  first other: ${q.firstStranger.slice(0, 90)}` : ''}\n`,
      );
  }
  const stamp = runStamp(opts.command);
  writeResultsJson('new-words', { ...stamp, results });
  const lines = [
    `## New words after an incremental run (precision@${K})`,
    '',
    `\`${opts.command}\` (${stamp.date.slice(0, 10)}, ${stamp.machine})`,
    '',
    `Three stories with invented names (20 posts each, the name in 15) arrive through an incremental run three hours after a full run;`,
    `their 12 queries (name alone, name with words, words alone) in windows ${WINDOWS.join(' and ')}; then \`run --full\` on the same data.`,
    `Bars (issue 46): every query's precision after the incremental run within 0.05 of after the full run, and its rows billed (a search with limit ${BILLED_LIMIT}) at most 1.2x the full run's;`,
    `issue 37's: the means within 0.05 (difference = full - incremental; negative: the incremental run answers better).`,
    '',
    '| corpus | posts | mean after incremental | after --full | difference | worst query difference (<= 0.05) | worst rows billed, incremental / full (<= 1.2) |',
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: |',
    ...results.map(
      (r) =>
        `| ${r.corpus} | ${r.posts.toLocaleString('en-US')} | ${r.meanIncremental.toFixed(3)} | ${r.meanFull.toFixed(3)} | ${(r.meanFull - r.meanIncremental).toFixed(3)} | ` +
        `${r.worstDifference.toFixed(2)} (${r.worstDifference <= 0.05 + 1e-9 ? 'met' : 'missed'}) | ${r.worstBilledRatio.toFixed(2)} (${r.worstBilledRatio <= 1.2 ? 'met' : 'missed'}) |`,
    ),
    '',
    ...results.flatMap((r) => [
      `${r.corpus}, per query (window: precision@${K} incremental / full, rows billed incremental / full):`,
      '',
      ...NEW_WORD_STORIES.flatMap((s) =>
        s.queries.map((q) => {
          const per = r.queries.filter((x) => x.query === q);
          return `- "${q}": ${per.map((x) => `${x.window} ${x.incremental.toFixed(2)} / ${x.full.toFixed(2)}, ${x.billedIncremental} / ${x.billedFull} rows`).join('; ')}`;
        }),
      ),
      '',
    ]),
  ];
  writeResultsSection('new-words', lines.join('\n'));
}
