/// <reference lib="dom" />
// The dashboard in a real browser: Debian's headless Chromium (tools/browser/chromium.ts) against a
// real server over the committed sample plus hostile posts of our own, run through the whole
// pipeline. Every page at a laptop and a phone width loads without a console error, a failed
// request or a CSP violation; charts draw pixels; the gallery's thumbnails load; a search shows its
// charge and the balance drops by it; markup in posts renders as text and never runs; the key
// lives in sessionStorage only.
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { Browser, Page } from 'playwright-core';
import type { RunningServer } from '../../serve/server.ts';
import { testServer } from '../helpers/server.ts';
import { UI_PAGES } from '../../serve/ui/ui-routes.ts';
import { launchChromium, openPage, VIEWPORTS, watchPage } from '../../tools/browser/chromium.ts';
import { AS_OF, runPipeline, sampleDataDir } from '../helpers/pipeline.ts';
import { callApi } from '../helpers/http.ts';
import { cleanupTmp, writeLines } from '../helpers/tmp.ts';

let s: RunningServer;
let browser: Browser;
let ui: string;

/** Markup a hostile poster puts in a title, a text, tags and a link: each sets window.__xss if it ever runs. */
const PROBE_TITLE = '<img src=x onerror="window.__xss=1">Doorbuster deals';
const PROBE_TEXT = '<script>window.__xss=2</script>Doorbuster deals on every doorbuster at the mall tonight';
const PROBE_TAG = '<svg onload=window.__xss=3>';

/** Unbroken text a hostile poster uses to widen every page that shows it: a handle, a word, a tag. */
const LONG_HANDLE = `deals_${'x'.repeat(300)}`;
const LONG_WORD = `door${'buster'.repeat(40)}`;

/** 24 of them: a narrative needs 15 posts (docs/fields.md, "Which posts form a narrative"). */
function hostilePosts(): unknown[] {
  return Array.from({ length: 24 }, (_, i) => ({
    uuid: `hostile-${i}`,
    platform: 'x',
    content_type: 'text',
    creator_id: 990_000 + i,
    creator_handle: i % 2 ? LONG_HANDLE : null,
    title: i % 3 ? PROBE_TITLE : `${PROBE_TITLE} ${LONG_WORD}`,
    description: `${PROBE_TEXT} ${['bargain', 'queue', 'sale', 'early'][i % 4]} https://example.com/${'a'.repeat(200)}`,
    tags: [PROBE_TAG, 'doorbuster', LONG_WORD.slice(0, 120)],
    published_at: new Date(AS_OF.getTime() - (1 + (i % 10)) * 86_400_000).toISOString(),
    like_count: 10 + i,
    comment_count: 2,
    share_count: 1,
    view_count: 100,
    content_url: 'javascript:window.__xss=4',
  }));
}

/** A new story in the 7d window: nothing, then 9 posts two days ago and 25 yesterday (the first burst is its spike). */
function burstPosts(): unknown[] {
  return Array.from({ length: 34 }, (_, i) => ({
    uuid: `burst-${i}`,
    platform: 'tiktok',
    content_type: 'text',
    creator_id: 880_000 + (i % 12),
    creator_handle: `llama_parade_${i % 12}`,
    title: 'Llama parade blocks the harbour bridge',
    description: `The llama parade crossed the harbour bridge at dawn ${['alpacas', 'wool', 'traffic', 'ferry'][i % 4]} llama parade`,
    tags: ['LlamaParade'],
    published_at: new Date(AS_OF.getTime() - (i < 9 ? 1.5 : 0.5) * 86_400_000).toISOString(),
    like_count: 40 + i,
    comment_count: 3,
    share_count: 2,
    view_count: 900,
  }));
}

/** A post whose ".jpg" is really HTML: ingest keeps it, the thumbnail route refuses it, the list must not offer it. */
const REFUSED = 'refused-thumbnail';

test.before(async () => {
  const dir = sampleDataDir();
  writeLines(path.join(dir, 'landing', 'hostile', 'posts.ndjson'), hostilePosts());
  writeLines(path.join(dir, 'landing', 'burst', 'posts.ndjson'), burstPosts());
  fs.mkdirSync(path.join(dir, 'landing', 'fake', 'media'), { recursive: true });
  fs.writeFileSync(path.join(dir, 'landing', 'fake', 'media', 'photo.jpg'), '<!doctype html><html><body>not a picture</body></html>\n');
  writeLines(path.join(dir, 'landing', 'fake', 'posts.ndjson'), [
    {
      uuid: REFUSED,
      platform: 'instagram',
      content_type: 'image',
      title: 'a photo that is a web page',
      published_at: new Date(AS_OF.getTime() - 86_400_000).toISOString(),
      media: [{ kind: 'image', path: 'media/photo.jpg' }],
    },
  ]);
  await runPipeline(dir);
  // A second generation an hour later (nothing new): the narratives' stories carry over, so the detail page has a history.
  await runPipeline(dir, ['run'], new Date(AS_OF.getTime() + 3_600_000));
  // Watches made from the pages name a receiver on this machine.
  s = await testServer(dir, { DEMO_CREDITS: '50', ALERTS_ALLOW_PRIVATE: '1' });
  ui = `${s.baseUrl}/ui/`;
  browser = await launchChromium();
});

test.after(async () => {
  await browser?.close();
  await s?.close();
  cleanupTmp();
});

const api = (p: string) => callApi(s.baseUrl, s.demo.secret, 'GET', p);

/** A page opened with the key set, and what went wrong on it. */
async function open(
  url: string,
  viewport: { width: number; height: number } = VIEWPORTS.laptop,
): Promise<{ page: Page; problems: string[]; close: () => Promise<void> }> {
  const ctx = await browser.newContext({ viewport });
  const page = await ctx.newPage();
  const problems = watchPage(page);
  const r = await openPage(page, url, s.demo.secret);
  assert.is(r.ready, 'true', `${url}: ${problems.join('; ')}`);
  return { page, problems, close: () => ctx.close() };
}

/** Pixels drawn (not fully transparent) on each canvas of the page, in document order. */
function canvasInk(page: Page, selector = 'canvas'): Promise<number[]> {
  return page.$$eval(selector, (cs) =>
    (cs as HTMLCanvasElement[]).map((c) => {
      const d = c.getContext('2d')!.getImageData(0, 0, c.width, c.height).data;
      let ink = 0;
      for (let i = 3; i < d.length; i += 4) if (d[i]! > 0) ink++;
      return ink;
    }),
  );
}

async function firstNarrativeId(): Promise<string> {
  const r = await api('/narratives/trending?window=30d&limit=1');
  return r.json.items[0].id as string;
}

test('every page loads at laptop and phone widths: no console error, failed request or CSP violation', async () => {
  const theme = (await api('/themes?window=30d&limit=1')).json.items[0];
  const pages = [
    'index.html',
    'themes.html',
    `index.html?theme=${theme.id}`,
    `narrative.html?id=${await firstNarrativeId()}`,
    'patterns.html',
    'search.html',
    'alerts.html',
    'account.html',
    'health.html',
  ];
  for (const [name, viewport] of Object.entries(VIEWPORTS))
    for (const p of pages) {
      const { page, problems, close } = await open(ui + p, viewport);
      // Thumbnails and lookalikes arrive after the page is ready: let them land, then look again.
      await page.waitForLoadState('networkidle');
      assert.equal(problems, [], `${name} ${p}`);
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
      assert.ok(overflow <= 1, `${name} ${p}: the page is ${overflow}px wider than the screen`);
      await close();
    }
});

test('narratives: sparklines and the period change per row; the sort and the map search change the list', async () => {
  const { page, close } = await open(`${ui}index.html?window=30d`);
  const rows = await page.$$('#narratives article');
  const trending = await api('/narratives/trending?window=30d&limit=20&daily=true');
  assert.is(rows.length, trending.json.items.length);
  const ink = await canvasInk(page, '#narratives canvas');
  assert.is(ink.length, rows.length, 'one sparkline per row');
  assert.ok(
    ink.every((x) => x > 0),
    `every sparkline drew: ${ink}`,
  );
  const firstIds = await page.$$eval('#narratives article', (as) => as.map((a) => (a as HTMLElement).dataset.id));
  assert.equal(
    firstIds,
    trending.json.items.map((n: { id: string }) => n.id),
  );
  await page.selectOption('#sel-sort', 'volume');
  await page.waitForFunction(() => new URL(location.href).searchParams.get('sort') === 'volume');
  const byVolume = await api('/narratives/trending?window=30d&limit=20&sort=volume');
  await page.waitForFunction(
    (id) => (document.querySelector('#narratives article') as HTMLElement | null)?.dataset.id === id,
    byVolume.json.items[0].id,
  );
  await page.fill('#q', 'sourdough');
  await page.press('#q', 'Enter');
  await page.waitForFunction(() => document.querySelector('#list-status')?.textContent?.includes('match "sourdough"'));
  const labels = await page.$$eval('#narratives .title', (as) => as.map((a) => a.textContent ?? ''));
  assert.ok(labels.length > 0 && labels.some((l) => /sourdough/i.test(l)), labels.join(' | '));
  await close();
});

test('themes: narratives grouped by theme, in the order of GET /themes; a theme opens its narratives; a narrative names its theme', async () => {
  const { page, close } = await open(`${ui}themes.html?window=30d`);
  const listed = (await api('/themes?window=30d&limit=10&daily=true')).json;
  assert.ok(
    listed.items.some((t: { narrative_count: number }) => t.narrative_count > 1),
    'the sample has a theme of several narratives',
  );
  const cards = await page.$$eval('#themes article.theme-card', (as) =>
    as.map((a) => ({
      id: (a as HTMLElement).dataset.id,
      title: a.querySelector('.theme-title .title')?.textContent,
      narratives: [...a.querySelectorAll('.theme-narratives li')].map((li) => (li as HTMLElement).dataset.id),
    })),
  );
  assert.equal(
    cards,
    listed.items.map((t: { id: string; label: string; narratives: Array<{ id: string }> }) => ({
      id: t.id,
      title: t.label,
      narratives: t.narratives.map((n) => n.id),
    })),
  );
  const ink = await canvasInk(page, '#themes canvas');
  assert.ok(ink.length === cards.length && ink.every((x) => x > 0), `a sparkline per theme: ${ink}`);
  // The theme of most narratives: its title opens the narratives page with its narratives only.
  const big = listed.items.reduce((a: { narrative_count: number }, b: { narrative_count: number }) =>
    b.narrative_count > a.narrative_count ? b : a,
  );
  await page.click(`#themes article[data-id="${big.id}"] .theme-title a`);
  await page.waitForSelector('body[data-ready="true"]');
  assert.ok(page.url().includes(`theme=${big.id}`));
  await page.waitForFunction((n) => document.querySelectorAll('#narratives article').length === n, big.narrative_count);
  const ids = await page.$$eval('#narratives article', (as) => as.map((a) => (a as HTMLElement).dataset.id));
  const filtered = (await api(`/narratives/trending?theme=${big.id}&limit=20`)).json;
  assert.equal(
    ids,
    filtered.items.map((n: { id: string }) => n.id),
  );
  assert.match((await page.textContent('#theme-banner'))!, new RegExp(`Theme: .*${big.narrative_count} narratives in the 30d window`));
  await page.click('#clear-theme');
  await page.waitForFunction(() => !new URL(location.href).searchParams.has('theme'));
  await page.waitForFunction((n) => document.querySelectorAll('#narratives article').length > n, big.narrative_count);
  await close();
  const narrative = await open(`${ui}narrative.html?id=${encodeURIComponent(big.narratives[0].id)}`);
  assert.match(
    (await narrative.page.textContent('#theme'))!,
    new RegExp(`Theme: .*\\(${big.narrative_count} narratives of the 30d window\\)`),
  );
  assert.is(await narrative.page.getAttribute('#theme a', 'href'), `index.html?window=30d&theme=${encodeURIComponent(big.id)}`);
  await narrative.close();
});

test('narrative detail: both charts draw, spikes named, posts, platforms, creators, history and related narratives', async () => {
  const id = await firstNarrativeId();
  const { page, close } = await open(`${ui}narrative.html?id=${encodeURIComponent(id)}`);
  const ink = await canvasInk(page, '.chart canvas');
  assert.is(ink.length, 2);
  assert.ok(ink[0]! > 500 && ink[1]! > 500, `chart pixels ${ink}`);
  const detail = (await api(`/narratives/${encodeURIComponent(id)}?limit=10`)).json;
  assert.is(await page.$$eval('#posts .post', (x) => x.length), detail.posts.items.length);
  // The posts a reader opens first come first, in their order; all the posts below, folded.
  assert.ok(detail.central_posts.length > 0);
  assert.equal(
    await page.$$eval('#central-posts .post .text', (x) => x.map((e) => e.textContent)),
    detail.central_posts.map((p: { title: string | null; description: string | null }) =>
      [p.title ?? '', p.title && p.description ? ' — ' : '', p.description ?? ''].join(''),
    ),
  );
  assert.is(await page.$eval('#all-posts', (e) => (e as HTMLDetailsElement).open), false);
  const first = await page.evaluate(() =>
    Boolean(
      document.querySelector('#central-posts')!.compareDocumentPosition(document.querySelector('#posts')!) &
      Node.DOCUMENT_POSITION_FOLLOWING,
    ),
  );
  assert.ok(first, 'the central posts come before all the posts');
  assert.is(await page.$$eval('#platforms tr', (x) => x.length), detail.platforms.length);
  // The momentum's velocity drawn as its line over the last week, and said in words.
  assert.ok((await page.textContent('#volume-chart'))!.includes('velocity (last 7 days)'));
  if (detail.narrative.velocity !== null)
    assert.ok((await page.textContent('main'))!.includes(`(${detail.narrative.velocity.toFixed(2)} posts a day`));
  const history = (await page.textContent('#history-text'))!;
  assert.ok(history.includes(detail.narrative.narrative_key));
  const traj = (await api(`/narratives/${encodeURIComponent(id)}/trajectory`)).json;
  assert.is(traj.points.length, 2, 'the story was in both generations');
  assert.match(history, /The same story .* for 2 generations, since g000001/);
  assert.equal(await page.$$eval('#history tbody tr td:first-child', (tds) => tds.map((t) => t.textContent)), ['g000002', 'g000001']);
  await page.waitForFunction(() => !document.querySelector('#related')?.textContent?.includes('looking'));
  await close();
});

test('patterns: the gallery shows each pattern with its thumbnails loaded, elements and lookalikes', async () => {
  const { page, close } = await open(`${ui}patterns.html`);
  const listed = (await api('/intelligence/patterns?scope=30d&limit=12')).json;
  assert.ok(listed.items.length > 0, 'the sample has patterns');
  assert.is(await page.$$eval('#gallery .pattern', (x) => x.length), listed.items.length);
  // Every medoid thumbnail is an image that decoded (fetched with the key, shown as a blob: URL).
  const want = listed.items.reduce((a: number, p: { medoidContentUuids: string[] }) => a + Math.min(3, p.medoidContentUuids.length), 0);
  await page.waitForFunction((n) => document.querySelectorAll('#gallery img.pattern-thumb').length === n, want, { timeout: 20_000 });
  const sizes = await page.$$eval('#gallery img.pattern-thumb', (imgs) =>
    (imgs as HTMLImageElement[]).map((i) => (i.complete ? i.naturalWidth : 0) + (i.src.startsWith('blob:') ? 0 : -1e6)),
  );
  assert.ok(
    sizes.every((w) => w > 0),
    `thumbnails ${sizes}`,
  );
  await page.waitForFunction(() => [...document.querySelectorAll('.lookalikes')].every((l) => !l.textContent?.includes('…')));
  const chipsShown = await page.$$eval('#gallery .pattern .chip', (x) => x.length);
  assert.ok(chipsShown >= listed.items.length, 'recurrent elements as chips');
  await close();
});

test('search: the hold shows before it runs; the charge after it; the balance drops by exactly the charge', async () => {
  const { page, close } = await open(`${ui}search.html`);
  await page.fill('#query', 'sourdough starter');
  await page.fill('#limit', '40');
  assert.is((await page.textContent('#hold-credits'))!.trim(), '0.4');
  const before = (await api('/usage?limit=1')).json.available as number;
  assert.is(Number(await page.textContent('#available')), before);
  await page.click('#run');
  await page.waitForSelector('#charged');
  const charged = Number(await page.textContent('#charged'));
  const rows = await page.$$eval('#rows tbody tr', (x) => x.length);
  assert.ok(rows > 0 && rows <= 40, `${rows} rows`);
  assert.is(charged, rows / 100);
  const after = (await api('/usage?limit=1')).json.available as number;
  assert.is(Math.round((before - after) * 1e6), Math.round(charged * 1e6));
  assert.is(Number(await page.textContent('#available-after')), after);
  assert.ok((await page.$$eval('#answer-narratives li', (x) => x.length)) > 0, 'the answer’s narratives');
  await close();
});

test('a refused thumbnail (a ".jpg" that is HTML) is never requested: the media list offers no path, the page asks nothing', async () => {
  const listed = (await api(`/media/${REFUSED}`)).json.items[0];
  assert.is(listed.thumbnail, null);
  assert.match(listed.refused, /not an image/);
  const { page, problems, close } = await open(`${ui}index.html`);
  const media: string[] = [];
  page.on('request', (r) => {
    if (/\/media\/[^?]/.test(r.url())) media.push(r.url());
  });
  const got = await page.evaluate(async (uuid) => {
    const api: string = './js/api.js'; // the page's own module (a variable: not resolved by tsc)
    const { thumbnailsOf } = await import(api);
    return await thumbnailsOf([uuid]).get(uuid);
  }, REFUSED);
  await page.waitForLoadState('networkidle');
  assert.is(got, null);
  assert.equal(media, [], 'a thumbnail requested');
  assert.equal(problems, []);
  await close();
});

test('creators by handle (the id only without one): narrative creators, representative posts, search creators', async () => {
  const id = await firstNarrativeId();
  const detail = (await api(`/narratives/${encodeURIComponent(id)}?limit=10`)).json;
  const { page, close } = await open(`${ui}narrative.html?id=${encodeURIComponent(id)}`);
  const cells = await page.$$eval('#creators tbody td:first-child', (tds) => tds.map((t) => t.textContent));
  assert.equal(
    cells,
    detail.creators
      .slice(0, 10)
      .map((c: { creatorHandle: string | null; creatorId: number }) =>
        c.creatorHandle ? `@${c.creatorHandle}` : `creator ${c.creatorId}`,
      ),
  );
  assert.ok(
    cells.some((c) => c!.startsWith('@')),
    'a handle shown',
  );
  const postCreators = await page.$$eval('#posts .post .creator', (x) => x.map((e) => e.textContent));
  assert.equal(
    postCreators,
    detail.posts.items.map((p: { creatorHandle: string | null; creatorId: number | null }) =>
      p.creatorHandle ? `@${p.creatorHandle}` : p.creatorId === null ? 'unknown creator' : `creator ${p.creatorId}`,
    ),
  );
  await close();
  const search = await open(`${ui}search.html`);
  await search.page.fill('#query', 'llama parade harbour bridge');
  await search.page.fill('#limit', '10');
  await search.page.click('#run');
  await search.page.waitForSelector('#charged');
  assert.match((await search.page.textContent('#answer-creators'))!, /^@llama_parade_\d+ \(tiktok, \d+ rows?\)/);
  await search.close();
});

test('7d: no lifecycle badge without its reason; the period change named by its period; sparklines inside their cards at 390 px', async () => {
  for (const [window, viewport] of [
    ['7d', VIEWPORTS.phone],
    ['30d', VIEWPORTS.laptop],
  ] as const) {
    const { page, close } = await open(`${ui}index.html?window=${window}`, viewport);
    const listed = (await api(`/narratives/trending?window=${window}&limit=20&daily=true`)).json.items;
    const text = (await page.textContent('#narratives'))!;
    assert.not.match(text, /n\/a/, `${window}: an unexplained n/a`);
    const badges = await page.$$eval('#narratives .badge[class*="lc-"]', (b) => b.map((x) => x.textContent));
    assert.equal(
      badges,
      listed.filter((n: { lifecycle: string | null }) => n.lifecycle).map((n: { lifecycle: string }) => n.lifecycle),
    );
    const periods = await page.$$eval('#narratives .period', (x) => x.map((e) => e.textContent));
    assert.equal(
      periods,
      listed.map(
        (n: { period_change: { days: number } }) => ` last ${n.period_change.days} days vs the ${n.period_change.days} days before`,
      ),
    );
    assert.ok(periods.length > 0 && periods.every((p) => p!.includes(window === '7d' ? '3 days' : '7 days')), periods.join());
    await page.waitForFunction((n) => document.querySelectorAll('#narratives .spark-box canvas').length === n, listed.length);
    const spill = await page.$$eval('#narratives article', (as) =>
      as.map((a) => {
        const card = a.getBoundingClientRect();
        const c = a.querySelector('.spark-box canvas')!.getBoundingClientRect();
        return Math.max(c.right - card.right, card.left - c.left);
      }),
    );
    assert.ok(
      spill.every((x) => x <= 0),
      `${window}: a sparkline past its card by ${Math.max(...spill)} px`,
    );
    await close();
  }
  const seven = (await api('/narratives/trending?window=7d&limit=1')).json.items[0];
  const { page, close } = await open(`${ui}narrative.html?id=${encodeURIComponent(seven.id)}`);
  assert.match((await page.getAttribute('#no-lifecycle', 'title'))!, /14 days or more/);
  assert.not.match((await page.textContent('main'))!, /n\/a/);
  await close();
});

test('a new story’s first burst (0 to 34 posts in two days) is its spike, said and drawn; daily charts tick by day', async () => {
  const hit = (await api('/narratives/search?q=llama%20parade&window=7d&limit=1')).json.items[0];
  assert.ok(hit, 'the burst formed a 7d narrative');
  const traj = (await api(`/narratives/${encodeURIComponent(hit.id)}/trajectory`)).json;
  assert.ok(
    traj.daily.some((d: { spike: boolean }) => d.spike),
    JSON.stringify(traj.daily_counts),
  );
  const { page, close } = await open(`${ui}narrative.html?id=${encodeURIComponent(hit.id)}`);
  const text = (await page.textContent('main'))!;
  assert.match(text, /Spikes \(orange\): \d{4}-\d\d-\d\d/);
  assert.not.match(text, /No spike/);
  // The volume chart's x ticks: on UTC day starts only, labelled by date (uPlot draws them on the canvas: read its splits).
  const ticks = await page.evaluate(async (daily) => {
    const charts: string = './js/charts.js';
    const { volumeChart } = await import(charts);
    const box = document.createElement('div');
    box.style.width = '700px';
    document.body.append(box);
    const u = volumeChart(box, daily) as unknown as { axes: Array<{ _splits: number[] | null; _values: string[] }> };
    // uPlot draws (and computes its ticks) on the next frame.
    while (!u.axes[0]!._splits) await new Promise((r) => requestAnimationFrame(r));
    return { splits: u.axes[0]!._splits!, values: u.axes[0]!._values };
  }, traj.daily);
  assert.ok(ticks.splits.length >= 2, `${ticks.splits}`);
  assert.ok(
    ticks.splits.every((t) => t % 86_400 === 0),
    `ticks off the day: ${ticks.splits.map((t) => new Date(t * 1000).toISOString())}`,
  );
  assert.ok(
    ticks.values.every((v) => /^[A-Z][a-z]{2} \d{1,2}$/.test(v)),
    ticks.values.join(),
  );
  await close();
});

test('words, not internals: a story key resolved in words; "1 credit"; pattern cards with under 3 generations say their size', async () => {
  const first = (await api('/narratives/trending?window=30d&limit=1')).json.items[0];
  const byKey = await open(`${ui}narrative.html?id=${encodeURIComponent(first.narrative_key)}`);
  const resolved = (await byKey.page.textContent('#resolved'))!;
  assert.match(resolved, /Opened by its story key nk-/);
  assert.not.match((await byKey.page.textContent('main'))!, /resolved by|narrative_key|earlier_generation_id/);
  await byKey.close();
  const search = await open(`${ui}search.html`);
  await search.page.fill('#limit', '100');
  assert.match((await search.page.textContent('#hold'))!, /Hold before it runs: 1 credit(?!s)/);
  await search.page.fill('#limit', '40');
  assert.match((await search.page.textContent('#hold'))!, /0\.4 credits/);
  await search.close();
  const { page, close } = await open(`${ui}patterns.html`);
  const listed = (await api('/intelligence/patterns?scope=30d&limit=12')).json.items;
  const trends = await page.$$eval('#gallery .pattern .trend', (ts) =>
    ts.map((t) => ({ canvas: t.querySelectorAll('canvas').length, text: t.textContent })),
  );
  assert.is(trends.length, listed.length);
  listed.forEach((p: { trajectory: Array<{ contentCount: number }> }, i: number) => {
    if (p.trajectory.length >= 3) return;
    assert.is(trends[i]!.canvas, 0, 'no chart of 1 or 2 points');
    assert.ok(trends[i]!.text!.length > 0);
    if (p.trajectory.length === 2)
      assert.is(trends[i]!.text, `${p.trajectory[0]!.contentCount} → ${p.trajectory[1]!.contentCount} posts over 2 generations`);
  });
  await close();
});

test('narrative detail: related narratives are the related read’s, each linked with its similarity', async () => {
  // The first narrative with related ones (the sample's skincare stories relate: test/fast/related-narratives.test.ts).
  const trending = (await api('/narratives/trending?window=30d&limit=100')).json.items as Array<{ id: string; label: string }>;
  let hit: { id: string } | undefined;
  let related: { items: Array<{ label: string }> } = { items: [] };
  for (const n of trending) {
    related = (await api(`/narratives/${encodeURIComponent(n.id)}/related?limit=5`)).json;
    hit = n;
    if (related.items.length) break;
  }
  assert.ok(hit && related.items.length, trending.map((n) => n.label).join(' | '));
  const { page, close } = await open(`${ui}narrative.html?id=${encodeURIComponent(hit!.id)}`);
  await page.waitForFunction(() => !document.querySelector('#related')?.textContent?.includes('looking'));
  const links = await page.$$eval('#related a', (as) => as.map((a) => a.textContent));
  assert.equal(
    links,
    related.items.map((x: { label: string }) => x.label),
  );
  assert.ok(links.length > 0, 'the skincare story has related ones');
  await close();
});

test('hostile posts: markup in titles, texts, tags and links renders as text and never runs', async () => {
  // The probes reached the served data: searchable, and on the narrative map when they formed one.
  const hits = await callApi(s.baseUrl, s.demo.secret, 'POST', '/search', {
    body: { query: 'doorbuster deals mall', limit: 20, window: '30d' },
  });
  assert.ok(hits.json.content.some((c: { title: string }) => c.title === PROBE_TITLE));
  const pages = ['index.html?window=30d', 'index.html?window=30d&q=doorbuster', 'search.html'];
  const hostileNarrative = (await api('/narratives/search?q=doorbuster&limit=1')).json.items[0];
  if (hostileNarrative) pages.push(`narrative.html?id=${encodeURIComponent(hostileNarrative.id)}`);
  assert.ok(hostileNarrative, 'the hostile posts formed a narrative');
  for (const p of pages) {
    const { page, problems, close } = await open(ui + p);
    if (p === 'search.html') {
      await page.fill('#query', 'doorbuster deals mall');
      await page.click('#run');
      await page.waitForSelector('#charged');
    }
    await page.waitForLoadState('networkidle');
    const text = await page.evaluate(() => document.body.textContent ?? '');
    if (p !== 'index.html?window=30d') assert.ok(text.includes('<') && /doorbuster/i.test(text), `${p}: the probe is on the page`);
    assert.is(await page.evaluate(() => (window as { __xss?: number }).__xss), undefined, `${p}: a probe ran`);
    assert.is(await page.$$eval('main img[onerror], main svg, main script', (x) => x.length), 0, `${p}: markup became elements`);
    const hrefs = await page.$$eval('main a', (as) => as.map((a) => a.getAttribute('href') ?? ''));
    assert.ok(!hrefs.some((h) => /^\s*javascript:/i.test(h)), `${p}: a javascript: link`);
    assert.equal(problems, [], p);
    await close();
  }
});

test('long unbroken text (a handle, a word, a tag, a URL) wraps: no page is wider than the screen', async () => {
  const found = (await api('/narratives/search?q=doorbuster')).json.items[0];
  assert.ok(found, 'the hostile narrative');
  const pages = Object.keys(UI_PAGES).map((name) =>
    name === 'narrative.html' ? `${ui}${name}?id=${encodeURIComponent(found.id)}` : `${ui}${name}`,
  );
  for (const viewport of [VIEWPORTS.laptop, VIEWPORTS.phone])
    for (const url of pages) {
      const { page, close } = await open(url, viewport);
      const searched = url.endsWith('search.html');
      if (searched) {
        await page.fill('#query', 'doorbuster deals at the mall');
        await page.fill('#limit', '10');
        await page.click('#run');
        await page.waitForSelector('#charged');
      }
      if (searched || url.includes('narrative.html'))
        assert.ok((await page.evaluate(() => document.body.innerText)).includes('deals_xxxx'), `${url}: the long handle is shown`);
      const width = await page.evaluate(() => document.documentElement.scrollWidth);
      assert.ok(width <= viewport.width, `${url} at ${viewport.width} px is ${width} px wide`);
      await close();
    }
});

test('the key: asked once, checked, kept in sessionStorage only; never in a URL or a cookie', async () => {
  const ctx = await browser.newContext();
  const page = await ctx.newPage();
  const urls: string[] = [];
  page.on('request', (r) => urls.push(r.url()));
  await page.goto(`${ui}index.html`);
  await page.waitForSelector('body[data-ready="key"]');
  await page.fill('#api-key', 'sk_not_a_real_key');
  await page.click('.key-gate button[type=submit]');
  await page.waitForFunction(() => document.querySelector('.key-gate .error')?.textContent?.includes('403'));
  await page.fill('#api-key', s.demo.secret);
  await page.click('.key-gate button[type=submit]');
  await page.waitForSelector('body[data-ready="true"]');
  assert.is(await page.evaluate(() => sessionStorage.getItem('content-intelligence.api-key')), s.demo.secret);
  assert.is(await page.evaluate(() => localStorage.length), 0);
  // Another page of the same tab does not ask again.
  await page.click('nav a[href="health.html"]');
  await page.waitForSelector('body[data-ready="true"]');
  assert.ok((await page.textContent('#generation'))!.startsWith('g'));
  assert.equal(await ctx.cookies(), []);
  assert.ok(!urls.some((u) => u.includes(s.demo.secret)), 'the key in a URL');
  await page.click('text=Forget key');
  await page.waitForSelector('body[data-ready="key"]');
  assert.is(await page.evaluate(() => sessionStorage.length), 0);
  await ctx.close();
});

test('alerts: "Tell me when this moves" makes a watch on the story (secret shown once); the alerts page lists and deletes it', async () => {
  const n = (await api('/narratives/trending?window=30d&limit=1')).json.items[0];
  const { page, problems, close } = await open(`${ui}narrative.html?id=${encodeURIComponent(n.id)}`);
  await page.click('#watch-this summary');
  await page.fill('#w-url', 'http://127.0.0.1:9/hooks/narratives');
  await page.check('#w-momentum');
  await page.fill('#w-level', '0.7');
  await page.click('#watch-this button[type=submit]');
  await page.waitForSelector('#watch-secret');
  const secret = await page.textContent('#watch-secret');
  assert.match(secret ?? '', /^whsec_[\w-]{20,}$/);
  const listed = (await api('/alerts')).json.items as Array<Record<string, any>>;
  assert.is(listed.length, 1);
  const w = listed[0]!;
  assert.equal(w.target, { kind: 'narrative', narrative_key: n.narrative_key });
  assert.equal(w.windows, ['30d']);
  assert.equal(w.conditions, { spike: true, lifecycle: {}, momentum: { level: 0.7, direction: 'up' } });
  assert.is(w.url, 'http://127.0.0.1:9/hooks/narratives');
  assert.equal(problems, []);
  await close();

  const alerts = await open(`${ui}alerts.html#${w.id}`);
  const card = `[data-watch="${w.id}"]`;
  assert.match((await alerts.page.textContent(card)) ?? '', /momentum rising past 0\.7/);
  // Opened by the link's #id: its events (none before a publish) and its delivery log.
  await alerts.page.waitForSelector(`${card} .watch-details table`);
  assert.match((await alerts.page.textContent(`${card} .watch-details`)) ?? '', /nothing has fired yet/);
  // The secret is never shown again: not in the list, not on the page.
  assert.not.match((await alerts.page.content()) ?? '', /whsec_/);
  alerts.page.once('dialog', (d) => void d.accept());
  await alerts.page.click(`${card} button:has-text("Delete")`);
  await alerts.page.waitForSelector(card, { state: 'detached' });
  assert.is((await api('/alerts')).json.items.length, 0);
  assert.equal(alerts.problems, []);
  await alerts.close();
});

test('pages are served with a CSP without inline script, nosniff, no referrer; the HTML has no inline script', async () => {
  for (const f of Object.keys(UI_PAGES)) {
    const res = await fetch(`${ui}${f}`);
    assert.is(res.status, 200, f);
    const csp = res.headers.get('content-security-policy') ?? '';
    assert.match(csp, /script-src 'self'(;|$)/);
    assert.not.match(csp, /unsafe-inline|unsafe-eval/);
    assert.match(csp, /frame-ancestors 'none'/);
    assert.is(res.headers.get('x-content-type-options'), 'nosniff');
    assert.is(res.headers.get('referrer-policy'), 'no-referrer');
    const html = await res.text();
    assert.not.match(html, /<script(?![^>]*\bsrc=)[^>]*>/i, `${f}: an inline script`);
    assert.not.match(html, /\son[a-z]+=/i, `${f}: an inline handler`);
    assert.not.match(html, /style=/i, `${f}: an inline style`);
  }
  const missing = await fetch(`${ui}../../etc/passwd`);
  assert.is(missing.status, 404);
  const traversal = await fetch(`${ui}js%2F..%2F..%2Fpackage.json`);
  assert.is(traversal.status, 404);
  assert.is((await traversal.json()).error.startsWith('no dashboard file'), true);
  const bare = await fetch(`${s.baseUrl}/ui`, { redirect: 'manual' });
  assert.is(bare.status, 302);
  assert.is(bare.headers.get('location'), `${new URL(s.baseUrl).pathname}/ui/`);
});

test.run();
