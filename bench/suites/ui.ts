// npm run bench -- ui --posts N [--runs R]: the dashboard in Debian's headless Chromium over the
// api bench's generation of N posts (bench/.cache/api-N; the server as its own process): for each
// page, the time from the navigation's start until the page marks itself interactive (its data
// read and drawn: body[data-ready], ui/js/layout.js), the first visit (the server meets each read
// for the first time) and the median of the later ones (a fresh browser context each: no browser
// cache), with the slowest API read behind the page (the browser's resource timing). The search
// page is also timed through one search: click until the charge is shown. The api bench's corpora
// carry no media files (precomputed visual vectors instead), so `--media` serves a corpus of its
// own with pictures and video frames on disk (bench/.cache/ui-media-N, the generator's default
// media) and times the gallery until every thumbnail is shown (the server decodes and encodes
// each the first time). Bar: every page interactive in under 1 s at 1M posts.
import fs from 'node:fs';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { generateCorpus } from '../../fixtures/generate.ts';
import { launchChromium, openPage, VIEWPORTS, watchPage } from '../../tools/browser/chromium.ts';
import { median, runStamp, thousands, writeResultsJson, writeResultsSection } from '../results-file.ts';
import { hasCurrentLayout } from '../lib/cached-generation.ts';
import { ensureData, rssMiB, startServer, type Server } from './api.ts';
import { AS_OF, child } from './pipeline.ts';

const ROOT = path.resolve(import.meta.dirname, '..', '..');

interface UiBenchOptions {
  posts: number;
  runs: number;
  /** A corpus with media files on disk (thumbnails) instead of the api bench's. */
  media: boolean;
  command: string;
}

/** A generation of `posts` posts whose media are files in its landing folder, built once. */
async function ensureMediaData(posts: number): Promise<string> {
  const dir = path.join(ROOT, 'bench', '.cache', `ui-media-${posts}`);
  if (hasCurrentLayout(dir)) return dir;
  fs.rmSync(dir, { recursive: true, force: true });
  process.stderr.write(`generating ${posts} posts with media files into ${dir}, then the whole pipeline ...\n`);
  await generateCorpus({
    posts,
    outDir: path.join(dir, 'landing', 'corpus'),
    seed: 42,
    asOf: AS_OF,
    videoFrames: 2,
    truthFile: path.join(dir, 'truth.ndjson'),
  });
  child('run-stages.ts', [dir, AS_OF, 'run']);
  return dir;
}

interface PageFigures {
  page: string;
  url: string;
  firstMs: number;
  medianMs: number;
  runsMs: number[];
  slowestApi: { path: string; ms: number } | null;
  problems: string[];
}

const BAR_MS = 1000;

/** After the page is ready: run one search (click to charge shown), or wait for every gallery thumbnail. */
type Action = 'search' | 'thumbnails';

async function api(server: Server, p: string): Promise<any> {
  const r = await fetch(`${server.baseUrl}${p}`, { headers: { 'x-api-key': server.key } });
  if (!r.ok) throw new Error(`${p}: ${r.status} ${await r.text()}`);
  return r.json();
}

/** One visit: a fresh context, the key already in sessionStorage; ms to interactive and the slowest API read. */
async function visit(browser: Browser, server: Server, url: string, action?: Action) {
  const ctx = await browser.newContext({ viewport: VIEWPORTS.laptop });
  try {
    const page = await ctx.newPage();
    const problems = watchPage(page);
    const { ready, readyMs } = await openPage(page, `${server.baseUrl}/ui/${url}`, server.key, 120_000);
    if (ready !== 'true') throw new Error(`${url}: the page answered ${ready}: ${problems.join('; ')}`);
    let ms = readyMs;
    if (action === 'search') {
      const t0 = await page.evaluate(() => performance.now());
      await page.click('#run');
      await page.waitForSelector('#charged', { timeout: 120_000 });
      ms = (await page.evaluate(() => performance.now())) - t0;
    } else if (action === 'thumbnails') {
      // Until no thumbnail is still loading ('…'), and every one shown has decoded; from the navigation start.
      await page.waitForFunction(
        () =>
          ![...document.querySelectorAll('.gallery .placeholder')].some((p) => p.textContent === '…') &&
          [...document.querySelectorAll<HTMLImageElement>('.gallery img')].every((i) => i.complete && i.naturalWidth > 0),
        undefined,
        { timeout: 120_000 },
      );
      ms = await page.evaluate(() => performance.now());
    }
    const apiReads = await page.evaluate((base) => {
      return performance
        .getEntriesByType('resource')
        .filter((e) => e.name.includes(base) && !e.name.includes('/ui/'))
        .map((e) => ({ path: new URL(e.name).pathname + new URL(e.name).search, ms: e.duration }));
    }, new URL(server.baseUrl).pathname);
    const slowest = apiReads.sort((a, b) => b.ms - a.ms)[0] ?? null;
    return { ms, slowest, problems };
  } finally {
    await ctx.close();
  }
}

export async function benchUi(o: UiBenchOptions): Promise<void> {
  const dir = o.media ? await ensureMediaData(o.posts) : (await ensureData(o.posts)).dir;
  const server = await startServer(dir);
  const browser = await launchChromium();
  const rss = { max: 0 };
  try {
    const health = await api(server, '/health');
    // The heaviest narratives: the largest of the 30-day window and of all time (their days, sentiment and splits).
    const big30 = (await api(server, '/narratives/trending?window=30d&sort=volume&limit=1')).items[0];
    const bigAll = (await api(server, '/narratives/trending?window=all&sort=volume&limit=1')).items[0];
    const pages: Array<[string, string, Action?]> = [
      ['narratives (30d, momentum)', 'index.html'],
      ['narratives (all, engagement)', 'index.html?window=all&sort=engagement'],
      ['narratives: map search', 'index.html?q=sourdough%20starter'],
      [`narrative: largest of 30d (${thousands(big30.content_count)} posts)`, `narrative.html?id=${encodeURIComponent(big30.id)}`],
      [`narrative: largest of all (${thousands(bigAll.content_count)} posts)`, `narrative.html?id=${encodeURIComponent(bigAll.id)}`],
      // With media, the gallery's thumbnails first: its first visit is the one where the server makes them.
      ...(o.media ? [['patterns: every thumbnail shown', 'patterns.html', 'thumbnails'] as [string, string, Action]] : []),
      ['patterns', 'patterns.html'],
      ['search (page)', 'search.html?q=back%20to%20school%20supply%20list&limit=100&window=all'],
      ['search: click to charge shown (limit 100, all)', 'search.html?q=back%20to%20school%20supply%20list&limit=100&window=all', 'search'],
      ['account', 'account.html'],
      ['health', 'health.html'],
    ];
    const figures: PageFigures[] = [];
    for (const [name, url, action] of pages) {
      const runs: number[] = [];
      let slowestApi: PageFigures['slowestApi'] = null;
      const problems: string[] = [];
      for (let i = 0; i < o.runs; i++) {
        const v = await visit(browser, server, url, action);
        runs.push(v.ms);
        if (i > 0 && (!slowestApi || v.slowest!.ms > slowestApi.ms)) slowestApi = v.slowest;
        problems.push(...v.problems);
        rss.max = Math.max(rss.max, rssMiB(server.proc.pid!).rss);
      }
      const f = {
        page: name,
        url,
        firstMs: runs[0]!,
        medianMs: median(runs.slice(1)),
        runsMs: runs,
        slowestApi,
        problems: [...new Set(problems)],
      };
      figures.push(f);
      process.stdout.write(
        `${name}: first ${f.firstMs.toFixed(0)} ms, then median ${f.medianMs.toFixed(0)} ms (${runs.map((r) => r.toFixed(0)).join(', ')})\n`,
      );
    }
    const worst = Math.max(...figures.map((f) => Math.max(f.firstMs, f.medianMs)));
    const md = [
      `## Dashboard at ${thousands(o.posts)} posts${o.media ? ', with media files' : ''}`,
      '',
      `Command: \`${o.command}\` — ${runStamp(o.command).date.slice(0, 10)}, ${runStamp(o.command).machine}. ` +
        `The server (\`npm run serve\`, its own process) over ${o.media ? "a generation of the generator's corpus with its media files on disk (bench/.cache/ui-media-N; 2 frames a video)" : "the api bench's generation"} (${health.generation}, ` +
        `${thousands(health.rows)} posts, ${thousands(health.narratives)} narratives, ${thousands(health.patterns)} patterns); ` +
        `Debian's headless Chromium (playwright-core) on the same 2 cores, a laptop viewport (1366 x 900), each visit in a fresh ` +
        'browser context with the key in sessionStorage. Interactive: from the navigation start until the page has read and ' +
        'drawn its data (body[data-ready], ui/js/layout.js); for the search row, from the click until the charge is shown. ' +
        `First: the first visit (the server meets each read for the first time); then: the median of the ${o.runs - 1} visits after it. ` +
        `Server RSS at most ${thousands(rss.max)} MiB during the visits.`,
      '',
      '| page | first visit, ms | then (median), ms | runs, ms | slowest API read behind it (later visits) | bar: < 1,000 ms |',
      '|---|---:|---:|---|---|---|',
      ...figures.map(
        (f) =>
          `| ${f.page} | ${f.firstMs.toFixed(0)} | ${f.medianMs.toFixed(0)} | ${f.runsMs.map((r) => r.toFixed(0)).join(', ')} | ` +
          `${f.slowestApi ? `\`${f.slowestApi.path.replace(/\|/g, '%7C').slice(0, 70)}\` ${f.slowestApi.ms.toFixed(0)} ms` : '–'} | ` +
          `${Math.max(f.firstMs, f.medianMs) < BAR_MS ? 'met' : 'MISSED'} |`,
      ),
      '',
      `Every page interactive in under 1 s: ${worst < BAR_MS ? 'met' : 'MISSED'} (slowest ${worst.toFixed(0)} ms).` +
        (figures.some((f) => f.problems.length) ? ` Browser problems seen: ${figures.flatMap((f) => f.problems).join('; ')}.` : ''),
    ].join('\n');
    const suite = `ui-${o.posts}${o.media ? '-media' : ''}`;
    writeResultsSection(suite, md);
    const file = writeResultsJson(suite, {
      ...runStamp(o.command),
      posts: o.posts,
      generation: health.generation,
      rssMaxMiB: rss.max,
      figures,
    });
    process.stdout.write(`${md}\n\nwrote bench/RESULTS.md and ${file}\n`);
  } finally {
    await browser.close();
    server.proc.kill('SIGTERM');
    await new Promise((r) => server.proc.once('exit', r));
  }
}
