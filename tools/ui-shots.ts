// npm run ui:shots [-- --out DIR] [--data-dir DIR]: screenshots of every dashboard page at a
// laptop and a phone width, so a person can look at the dashboard without running a browser. The
// committed sample (fixtures/sample) goes through the whole pipeline into a fresh data directory
// (or --data-dir's published generation is used as it is), a real server serves it, and Debian's
// headless Chromium (tools/browser/chromium.ts) takes the pictures: docs/screenshots/<width>-<page>.png
// by default.
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { parseCliArgs, UsageError } from '../core/infra/cli-args.ts';
import { loadConfig } from '../core/infra/config.ts';
import { createLogger } from '../core/infra/log.ts';
import { resolveStages, runStages } from '../pipeline/run/runner.ts';
import { startServer, type RunningServer } from '../serve/server.ts';
import { pollUntil } from '../core/infra/wait-at-most.ts';
import { plantedStory } from '../fixtures/planted-story.ts';
import { launchChromium, openPage, VIEWPORTS, watchPage } from './browser/chromium.ts';

const ROOT = path.resolve(import.meta.dirname, '..');
/** The sample's as-of instant (its posts end in October 2026). */
const SAMPLE_AS_OF = new Date('2026-11-01T00:00:00Z');

const { values } = (() => {
  try {
    return parseCliArgs({
      options: {
        out: { type: 'string', default: path.join(ROOT, 'docs', 'screenshots') },
        'data-dir': { type: 'string' },
        query: { type: 'string' },
      },
    });
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    process.stderr.write(`ui:shots: ${err.message}\n`);
    process.exit(2);
  }
})();
const out = path.resolve(values.out!);
const own = values['data-dir'] ? path.resolve(values['data-dir']) : null;
const dataDir = own ?? fs.mkdtempSync(path.join(os.tmpdir(), 'ui-shots-'));
const quiet = createLogger('ui-shots', 'silent');
// A data directory of the caller's is served as it is: its ledger too (a search shot is charged there).
// Watches in the alerts shot POST to a receiver on this machine.
const config = loadConfig({
  DATA_DIR: dataDir,
  PORT: '0',
  HOST: '127.0.0.1',
  LOG_LEVEL: 'silent',
  ACCESS_LOG: 'off',
  ALERTS_ALLOW_PRIVATE: '1',
});
if (!own) {
  fs.cpSync(path.join(ROOT, 'fixtures', 'sample', 'posts'), path.join(dataDir, 'landing', 'sample'), { recursive: true });
  process.stdout.write(`pipeline: the committed sample into ${dataDir} ...\n`);
  await runStages(resolveStages(['run']), { config, log: quiet, asOf: SAMPLE_AS_OF, tty: false });
}
/** The alerts shot's webhook receiver (alertsToShow starts it). */
const receiver = http.createServer((req, res) => req.resume().on('end', () => res.writeHead(204).end()));
const server = await startServer(config, quiet);
const browser = await launchChromium();
try {
  const key = server.demo.secret;
  const trending = (await (
    await fetch(`${server.baseUrl}/narratives/trending?window=30d&sort=volume&limit=1`, { headers: { 'x-api-key': key } })
  ).json()) as { items: Array<{ id: string }> };
  const watchId = own ? null : await alertsToShow(server, key);
  const pages: Array<[string, string]> = [
    ['narratives', 'index.html'],
    ['themes', 'themes.html'],
    ['narrative', `narrative.html?id=${encodeURIComponent(trending.items[0]!.id)}`],
    ['patterns', 'patterns.html'],
    ['search', `search.html?q=${encodeURIComponent(values.query ?? 'sourdough starter')}&limit=20`],
    ...(watchId ? ([['alerts', `alerts.html#${watchId}`]] as Array<[string, string]>) : []),
    ['account', 'account.html'],
    ['health', 'health.html'],
  ];
  fs.mkdirSync(out, { recursive: true });
  for (const [width, viewport] of Object.entries(VIEWPORTS))
    for (const [name, url] of pages) {
      const ctx = await browser.newContext({ viewport });
      const page = await ctx.newPage();
      const problems = watchPage(page);
      const { ready } = await openPage(page, `${server.baseUrl}/ui/${url}`, key);
      if (name === 'alerts') await page.waitForSelector('.watch-details table');
      if (name === 'search') {
        await page.click('#run');
        await page.waitForSelector('#charged');
      }
      await page.waitForLoadState('networkidle');
      const file = path.join(out, `${width}-${name}.png`);
      await page.screenshot({ path: file, fullPage: true });
      process.stdout.write(`${path.relative(process.cwd(), file)}  (${ready}${problems.length ? `; ${problems.join('; ')}` : ''})\n`);
      await ctx.close();
    }
} finally {
  await browser.close();
  await server.close();
  if (receiver.listening) receiver.close();
  if (!own) fs.rmSync(dataDir, { recursive: true, force: true });
}

/**
 * The alerts page with something to show: a watch on any new narrative and one on the sample's
 * largest story, then the planted story through an incremental run an hour later; the server
 * evaluates the publish and delivers to a receiver here. Returns the first watch's id.
 */
async function alertsToShow(s: RunningServer, key: string): Promise<string> {
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks/narratives`;
  const post = async (body: unknown) =>
    (await (
      await fetch(`${s.baseUrl}/alerts`, {
        method: 'POST',
        headers: { 'x-api-key': key, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      })
    ).json()) as { watch: { id: string } };
  const first = await post({
    name: 'Any new story',
    target: { kind: 'any' },
    windows: ['7d', '30d'],
    conditions: { new_narrative: true },
    url,
  });
  await post({
    name: 'Kombucha, anything',
    target: { kind: 'query', query: 'kombucha' },
    windows: ['30d'],
    conditions: { new_narrative: true, spike: true },
    url,
  });
  const later = new Date(SAMPLE_AS_OF.getTime() + 3_600_000);
  const landing = path.join(dataDir, 'landing', 'planted');
  fs.mkdirSync(landing, { recursive: true });
  fs.writeFileSync(
    path.join(landing, 'posts.ndjson'),
    plantedStory(later)
      .map((p) => JSON.stringify(p))
      .join('\n') + '\n',
  );
  await runStages(resolveStages(['run']), { config, log: quiet, asOf: later, tty: false });
  await s.snapshots.refresh();
  await s.alerts.evaluator.idle();
  await pollUntil(
    'the events delivered',
    async () => (await s.alerts.outbox.events(first.watch.id, 10)).every((e) => e.status === 'delivered'),
    30_000,
  );
  return first.watch.id;
}
