// The price table (serve/billing/prices.ts) is the one source of every price the service states:
// GET /billing/prices, the OpenAPI document and the MCP tool descriptions show its figures, every
// figure of credits in those texts is one the table gives (a price, or a price times a default
// limit), and the dashboard reads the prices from the API rather than writing one down.
import fs from 'node:fs';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import Koa from 'koa';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { timesMicro, toCredits } from '../../ledger/money.ts';
import { pricesRouter } from '../../serve/billing/price-routes.ts';
import { PRICES } from '../../serve/billing/prices.ts';
import { openApiDocument } from '../../serve/openapi/openapi.ts';
import { INSIGHTS_DEPTH_DEFAULT, RECORDS_LIMIT_DEFAULT } from '../../serve/jobs/job-request.ts';
import { TOOLS } from '../../serve/mcp/tools.ts';
import { SEARCH_LIMIT_DEFAULT } from '../../serve/search/search-body.ts';

const credits = (k: keyof typeof PRICES) => toCredits(PRICES[k]);
/** Every figure of credits a text may state: a price, or the most a call of a default limit holds. */
const allowed = new Set<number>([
  ...Object.values(PRICES).map(toCredits),
  toCredits(timesMicro(PRICES.record, SEARCH_LIMIT_DEFAULT)),
  toCredits(timesMicro(PRICES.record, RECORDS_LIMIT_DEFAULT)),
  ...Object.values(INSIGHTS_DEPTH_DEFAULT).map((d) => toCredits(timesMicro(PRICES.insightRecord, d))),
]);
/** Every number a text states. */
const numbers = (text: string) => [...text.matchAll(/\d+(?:\.\d+)?/g)].map((m) => Number(m[0]));
/** The figures a text states as credits: "0.01 credits", "1 credit". */
const creditFigures = (text: string) => [...text.matchAll(/(\d+(?:\.\d+)?) credits?\b/g)].map((m) => Number(m[1]));

test('GET /billing/prices answers the table', async () => {
  const app = new Koa().use(pricesRouter().routes());
  const server = app.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  try {
    const res = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/billing/prices`);
    const body = (await res.json()) as { search: { per_record: number }; jobs: Record<string, Record<string, number>> };
    assert.is(res.status, 200);
    assert.is(body.search.per_record, credits('record'));
    assert.equal(body.jobs, {
      records: { per_record: credits('record') },
      insights: { per_record: credits('insightRecord'), include_signals: credits('signals') },
      patterns: { per_call: credits('patterns') },
      stats: { per_call: credits('stats') },
    });
  } finally {
    server.close();
  }
});

test('the OpenAPI document states the table’s prices', () => {
  const doc = openApiDocument('') as { paths: Record<string, { post: { summary: string } }> };
  const search = doc.paths['/search']!.post.summary;
  const jobs = doc.paths['/intelligence/jobs']!.post.summary;
  assert.equal(numbers(search), [credits('record'), credits('record')], search);
  assert.equal(
    numbers(jobs),
    [credits('record'), credits('insightRecord'), credits('signals'), credits('patterns'), credits('stats')],
    jobs,
  );
  for (const f of creditFigures(JSON.stringify(doc)))
    assert.ok(allowed.has(f), `the OpenAPI text states ${f} credits, not a figure of the table`);
});

test('the MCP tool descriptions state the table’s prices', () => {
  const description = (name: string) => TOOLS.find((t) => t.name === name)!.description;
  const search = description('search');
  assert.ok(
    search.includes(`COST: ${credits('record')} credits per row returned (the call holds limit x ${credits('record')} first`),
    search,
  );
  assert.ok(search.includes(`at most ${toCredits(timesMicro(PRICES.record, SEARCH_LIMIT_DEFAULT))} credit`), search);
  const job = description('job_submit');
  for (const [k, what] of [
    ['record', 'records'],
    ['insightRecord', 'insights'],
    ['patterns', 'patterns'],
    ['stats', 'stats'],
  ] as const)
    assert.ok(job.includes(`${what} ${credits(k)}`), `job_submit states ${what} at ${credits(k)}: ${job}`);
  assert.ok(job.includes(`+${credits('signals')} credit`), job);
  for (const t of TOOLS)
    for (const f of creditFigures(t.description)) assert.ok(allowed.has(f), `${t.name} states ${f} credits, not a figure of the table`);
});

test('the dashboard takes its prices from GET /billing/prices', () => {
  for (const page of ['account.js', 'search.js']) {
    const js = fs.readFileSync(path.join(import.meta.dirname, '..', '..', 'ui', 'js', page), 'utf8');
    assert.ok(js.includes("get('/billing/prices')"), `${page} reads /billing/prices`);
    assert.not.ok(/\b0\.0\d+\s*credits?/.test(js), `${page} writes a price down`);
  }
});

test.run();
