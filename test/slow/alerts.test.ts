// Alert watches through the real server (docs/api.md, "Alerts"): POST/GET/DELETE /alerts on the
// committed sample, the per-account bound under concurrent creates, another account's watch a 404,
// bad bodies answered with what is wrong, private webhook addresses refused unless
// ALERTS_ALLOW_PRIVATE=1; then a publish (a new story in an incremental run) evaluated after the
// server swaps to it (one event per watch for the story, its windows listed, its posts' text, its
// dashboard link), again at the next start when the evaluation never reached the outbox (a server
// killed between the two), once more at a restart without making an event twice; and a full
// rebuild of the unchanged data (`run --full`) that fires no new_narrative.
import { createHmac } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { dataDirLayout } from '../../core/infra/data-dir.ts';
import { generationDir } from '../../core/snapshots/generations.ts';
import { pollUntil } from '../../core/infra/wait-at-most.ts';
import { plantedStory } from '../../fixtures/planted-story.ts';
import type { AlertEvent, EventState, Watch } from '../../serve/alerts/alert-model.ts';
import { signingKey, watchSecret } from '../../serve/alerts/watch-secret.ts';
import type { RunningServer } from '../../serve/server.ts';
import { callApi } from '../helpers/http.ts';
import { AS_OF, runPipeline, pipedSampleDir } from '../helpers/pipeline.ts';
import { testServer } from '../helpers/server.ts';
import { cleanupTmp, tmpDir, writeLines } from '../helpers/tmp.ts';

const LATER = new Date(AS_OF.getTime() + 3_600_000);
const PER_ACCOUNT = 6;
const ENV = { ALERTS_ALLOW_PRIVATE: '1', ALERTS_PER_ACCOUNT: String(PER_ACCOUNT) };

let dir: string;
let s: RunningServer;
let receiver: http.Server;
let hook: string;
/** What reached the receiver: each delivery's headers and body, in order. */
const received: Array<{ headers: http.IncomingHttpHeaders; body: string }> = [];

const api = (method: string, p: string, opts: Parameters<typeof callApi>[4] = {}) => callApi(s.baseUrl, s.demo.secret, method, p, opts);
const create = (body: unknown, key?: string) => api('POST', '/alerts', { body, key });

test.before(async () => {
  dir = await pipedSampleDir();
  // A receiver on this machine (so the server runs with ALERTS_ALLOW_PRIVATE=1) that takes every event.
  receiver = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString('utf8')));
    req.on('end', () => {
      received.push({ headers: req.headers, body });
      res.end(body ? 'ok' : 'empty');
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  hook = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
  s = await testServer(dir, ENV);
});

test.after(async () => {
  await s?.close();
  await new Promise((r) => receiver.close(r));
  cleanupTmp();
});

test('POST /alerts makes a watch and shows its signing secret once; GET lists it with its paused state; DELETE removes it', async () => {
  const made = await create({ name: 'coffee', target: { kind: 'query', query: 'coffee' }, conditions: { spike: true }, url: hook });
  assert.is(made.status, 201, JSON.stringify(made.json));
  const w = made.json.watch as Watch;
  assert.match(w.id, /^alw_/);
  assert.equal(
    [w.name, w.target, w.windows, w.conditions, w.url, w.paused, w.secret_version],
    ['coffee', { kind: 'query', query: 'coffee' }, ['7d'], { spike: true }, hook, null, 1],
  );
  const key = await signingKey(dataDirLayout(dir).alerts, undefined);
  assert.is(made.json.secret, watchSecret(key, w.id, 1), "the secret is the watch's derived one");
  const list = await api('GET', '/alerts');
  assert.is(list.status, 200);
  assert.ok(list.json.items.some((x: Watch) => x.id === w.id && x.paused === null));
  assert.is(list.json.limit, PER_ACCOUNT);
  assert.not.ok(JSON.stringify(list.json).includes(made.json.secret), 'the secret is shown only at creation');
  const one = await api('GET', `/alerts/${w.id}`);
  assert.is(one.status, 200);
  assert.equal(one.json, { watch: w, events: [] });
  const gone = await api('DELETE', `/alerts/${w.id}`);
  assert.equal([gone.status, gone.json], [200, { id: w.id, deleted: true }]);
  assert.is((await api('GET', `/alerts/${w.id}`)).status, 404);
  assert.is((await api('DELETE', `/alerts/${w.id}`)).status, 404);
  assert.not.ok((await api('GET', '/alerts')).json.items.some((x: Watch) => x.id === w.id));
});

test("another account's watch is a 404 to read or delete, and absent from its list", async () => {
  const made = await create({ target: { kind: 'any' }, conditions: { new_narrative: true }, url: hook });
  const other = await s.ledger.createAccount('other');
  const key = (await s.ledger.createKey(other.id)).secret;
  const read = await api('GET', `/alerts/${made.json.watch.id}`, { key });
  assert.is(read.status, 404);
  assert.match(read.json.error, /no watch alw_/);
  assert.is((await api('DELETE', `/alerts/${made.json.watch.id}`, { key })).status, 404);
  assert.equal((await api('GET', '/alerts', { key })).json.items, []);
  assert.is((await api('GET', `/alerts/${made.json.watch.id}`)).status, 200, 'still there for its owner');
  await api('DELETE', `/alerts/${made.json.watch.id}`);
  assert.is((await api('GET', '/alerts', { key: null })).status, 403, 'behind the API key');
});

test('a narrative or theme named by an id of the served generation is kept as its stable key, in its own window', async () => {
  const trending = (await api('GET', '/narratives/trending?window=30d&limit=1')).json.items[0];
  const byId = await create({ target: { kind: 'narrative', id: trending.id }, conditions: { lifecycle: { to: ['peaking'] } }, url: hook });
  assert.is(byId.status, 201, JSON.stringify(byId.json));
  assert.equal(byId.json.watch.target, { kind: 'narrative', narrative_key: trending.narrative_key });
  assert.equal(byId.json.watch.windows, ['30d']);
  const theme = (await api('GET', '/themes?window=all&limit=1')).json.items[0];
  const byTheme = await create({
    target: { kind: 'theme', id: theme.id },
    windows: ['all'],
    conditions: { momentum: { level: 0.5 } },
    url: hook,
  });
  assert.is(byTheme.status, 201, JSON.stringify(byTheme.json));
  assert.equal(byTheme.json.watch.target, { kind: 'theme', theme_key: theme.theme_key });
  assert.equal(byTheme.json.watch.conditions, { momentum: { level: 0.5, direction: 'up' } });
  const wrongWindow = await create({
    target: { kind: 'narrative', narrative_key: trending.narrative_key },
    windows: ['7d'],
    conditions: { spike: true },
    url: hook,
  });
  assert.is(wrongWindow.status, 400);
  assert.match(wrongWindow.json.error, /the target is in window 30d, not 7d/);
  const unknown = await create({ target: { kind: 'narrative', id: 'nope' }, conditions: { spike: true }, url: hook });
  assert.is(unknown.status, 400);
  assert.match(unknown.json.error, /target nope is not a narrative id of generation g\d+/);
  const unknownTheme = await create({ target: { kind: 'theme', theme_key: 'tk-nope' }, conditions: { spike: true }, url: hook });
  assert.match(unknownTheme.json.error, /target tk-nope is not a theme id or theme_key/);
  for (const w of [byId, byTheme]) await api('DELETE', `/alerts/${w.json.watch.id}`);
});

test('bad bodies are 400s that name every problem; a form body is a 415', async () => {
  const cases: Array<[unknown, RegExp]> = [
    [{}, /target is required.*conditions is required.*url is required/],
    [{ target: { kind: 'nope' }, conditions: { spike: true }, url: hook }, /target\.kind must be one of query, narrative, theme, any/],
    [{ target: { kind: 'query' }, conditions: { spike: true }, url: hook }, /query is required/],
    [
      { target: { kind: 'any' }, conditions: {}, url: hook },
      /conditions must set at least one of spike, lifecycle, momentum and new_narrative/,
    ],
    [{ target: { kind: 'any' }, conditions: { spike: false }, url: hook }, /conditions must set at least one/],
    [
      { target: { kind: 'any' }, conditions: { momentum: { level: 1.5 } }, url: hook },
      /conditions\.momentum\.level must be between 0 and 1/,
    ],
    [
      { target: { kind: 'any' }, conditions: { momentum: { level: 0.5, direction: 'sideways' } }, url: hook },
      /direction must be up or down/,
    ],
    [
      { target: { kind: 'any' }, conditions: { lifecycle: { to: ['booming'] } }, url: hook },
      /conditions\.lifecycle\.to holds lifecycles: emerging/,
    ],
    [{ target: { kind: 'any' }, conditions: { spike: true }, windows: ['1d'], url: hook }, /windows\[\] must be one of 7d, 30d, 90d, all/],
    [{ target: { kind: 'any' }, conditions: { spike: true }, windows: ['7d', '7d'], url: hook }, /windows must not repeat a window/],
    [{ target: { kind: 'any' }, conditions: { spike: true }, windows: [], url: hook }, /windows must not be empty/],
    [{ target: { kind: 'any' }, conditions: { spike: true }, url: 'ftp://example.com/x' }, /url must be an http or https URL/],
    [{ target: { kind: 'any' }, conditions: { spike: true }, url: 'not a url' }, /url must be an absolute http\(s\) URL/],
    [
      { target: { kind: 'any' }, conditions: { spike: true }, url: 'https://user:pw@example.com/' },
      /must not carry a user name or password/,
    ],
    [
      { target: { kind: 'any' }, conditions: { spike: true }, url: hook, colour: 'red' },
      /unknown field "colour": only name, target, windows, conditions and url/,
    ],
    [
      { target: { kind: 'any', query: 'x' }, conditions: { spike: true }, url: hook },
      /unknown field "query" in target: only kind is allowed/,
    ],
    [
      { target: { kind: 'narrative', id: 'a', narrative_key: 'nk-a' }, conditions: { spike: true }, url: hook },
      /exactly one of narrative_key and id/,
    ],
    [{ target: { kind: 'any' }, conditions: { spike: true }, url: hook, name: '' }, /name must not be empty/],
    [[1, 2], /the body must be a JSON object/],
  ];
  for (const [body, why] of cases) {
    const r = await create(body);
    assert.is(r.status, 400, JSON.stringify(body));
    assert.match(r.json.error, why, JSON.stringify(body));
  }
  const form = await fetch(`${s.baseUrl}/alerts`, {
    method: 'POST',
    headers: { 'x-api-key': s.demo.secret, 'content-type': 'application/x-www-form-urlencoded' },
    body: JSON.stringify({ target: { kind: 'any' }, conditions: { spike: true }, url: hook }),
  });
  assert.is(form.status, 415);
  assert.is((await api('GET', '/alerts')).json.items.length, 0, 'none of them made a watch');
});

test('the bound per account holds under concurrent creates and is answered with a 409 naming it', async () => {
  const acct = await s.ledger.createAccount('bounded');
  const key = (await s.ledger.createKey(acct.id)).secret;
  const answers = await Promise.all(
    Array.from({ length: PER_ACCOUNT + 4 }, (_, i) =>
      create({ name: `w${i}`, target: { kind: 'any' }, conditions: { new_narrative: true }, url: hook }, key),
    ),
  );
  assert.equal(answers.map((a) => a.status).sort(), [...Array(PER_ACCOUNT).fill(201), ...Array(4).fill(409)]);
  const refused = answers.find((a) => a.status === 409)!;
  assert.match(refused.json.error, new RegExp(`has ${PER_ACCOUNT} watches, the most an account may have \\(ALERTS_PER_ACCOUNT\\)`));
  assert.is(refused.json.limit, PER_ACCOUNT);
  assert.is((await api('GET', '/alerts', { key })).json.items.length, PER_ACCOUNT);
  // Another account is not held by this one's watches.
  const mine = await create({ target: { kind: 'any' }, conditions: { spike: true }, url: hook });
  assert.is(mine.status, 201);
  // A deleted watch frees its place.
  await api('DELETE', `/alerts/${answers.find((a) => a.status === 201)!.json.watch.id}`, { key });
  assert.is((await create({ target: { kind: 'any' }, conditions: { spike: true }, url: hook }, key)).status, 201);
  await api('DELETE', `/alerts/${mine.json.watch.id}`);
});

test('a loopback or private webhook address is refused without ALERTS_ALLOW_PRIVATE=1', async () => {
  // A copy of the data directory: a second server of its own.
  const copy = tmpDir();
  fs.cpSync(path.join(dir, 'snapshots'), path.join(copy, 'snapshots'), { recursive: true });
  const strict = await testServer(copy, {});
  try {
    for (const url of [hook, 'http://10.1.2.3/hook', 'http://[::1]:8080/x', 'http://169.254.169.254/latest/meta-data']) {
      const r = await callApi(strict.baseUrl, strict.demo.secret, 'POST', '/alerts', {
        body: { target: { kind: 'any' }, conditions: { spike: true }, url },
      });
      assert.is(r.status, 400, url);
      assert.match(r.json.error, /a loopback or private address: webhooks go to public addresses only/, url);
    }
    // A public address is taken (an address literal: no DNS lookup needed).
    const pub = await callApi(strict.baseUrl, strict.demo.secret, 'POST', '/alerts', {
      body: { target: { kind: 'any' }, conditions: { spike: true }, url: 'https://93.184.215.14/hook' },
    });
    assert.is(pub.status, 201, JSON.stringify(pub.json));
  } finally {
    await strict.close();
  }
});

/** The account's watches' events as GET /alerts/{id} shows them. */
async function eventsOf(id: string): Promise<EventState[]> {
  const r = await api('GET', `/alerts/${id}`);
  assert.is(r.status, 200);
  return r.json.events as EventState[];
}

/** The event reached the receiver: POSTed as JSON, the body the event itself, signed with the watch's secret (the check docs/api.md gives receivers). */
function assertReceivedSigned(event: AlertEvent, secret: string): void {
  const got = received.filter((r) => r.headers['x-alert-event-id'] === event.id);
  assert.ok(got.length >= 1, `event ${event.id} reached the receiver`);
  const r = got[0]!;
  assert.is(r.headers['content-type'], 'application/json');
  assert.is(r.headers['x-alert-event-type'], event.type);
  assert.equal(JSON.parse(r.body), event);
  const sig = Object.fromEntries(
    String(r.headers['x-alert-signature'])
      .split(',')
      .map((kv) => kv.split('=', 2)),
  );
  assert.is(sig.v1, createHmac('sha256', secret).update(`${sig.t}.${r.body}`).digest('hex'), 'signed with the watch secret');
  assert.ok(Math.abs(Date.now() / 1000 - Number(sig.t)) < 300, 'a fresh timestamp');
}

/** The answer of GET `p` matches the OpenAPI document's schema `name`. */
async function assertDocumented(p: string, name: string): Promise<void> {
  const doc = (await (await fetch(`${s.baseUrl}/openapi.json`)).json()) as { components: unknown };
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  ajv.addSchema({ $id: 'doc', components: doc.components });
  const validate = ajv.compile({ $ref: `doc#/components/schemas/${name}` });
  assert.ok(validate((await api('GET', p)).json), ajv.errorsText(validate.errors));
}

const STORY = /kombucha|brightbrew|mould/i;
const isStory = (e: AlertEvent) => STORY.test(e.narrative.label);

test('a publish is evaluated after the swap, again at a start when its events never reached the outbox, and never makes an event twice', async () => {
  const first = s.snapshots.generation!.id;
  const made = (await create({ target: { kind: 'any' }, windows: ['7d', '30d'], conditions: { new_narrative: true }, url: hook })).json;
  const any = made.watch as Watch;
  const anySecret = made.secret as string;
  const named = (
    await create({ target: { kind: 'query', query: 'kombucha recall' }, windows: ['7d'], conditions: { new_narrative: true }, url: hook })
  ).json.watch as Watch;
  const other = (
    await create({ target: { kind: 'query', query: 'sourdough starter' }, windows: ['7d'], conditions: { new_narrative: true }, url: hook })
  ).json.watch as Watch;
  assert.ok(any && named && other);
  // The story arrives in an incremental run; the server swaps to it and evaluates.
  writeLines(path.join(dir, 'landing', 'planted.ndjson'), plantedStory(LATER));
  await runPipeline(dir, ['run'], LATER);
  await s.snapshots.refresh();
  const second = s.snapshots.generation!.id;
  assert.is.not(second, first);
  await s.alerts.evaluator.idle();
  const report = s.alerts.evaluator.reports.at(-1)!;
  assert.equal([report.generation, report.previous], [second, first]);
  assert.ok(report.added > 0 && report.added === report.events.length, `${report.added} of ${report.events.length} events added`);

  // The one new story: one event per watch that sees it, covering each window it is in.
  const anyEvents = await eventsOf(any.id);
  assert.is(anyEvents.length, 1, `the any watch fired once (${anyEvents.map((e) => e.event.narrative.label).join(' | ')})`);
  const story = anyEvents[0]!.event;
  assert.ok(isStory(story), story.narrative.label);
  assert.equal([story.type, story.generation, story.window], ['narrative.new_narrative', second, '30d']);
  assert.equal(
    story.matches.map((m) => [m.window, m.condition]),
    [
      ['30d', 'new_narrative'],
      ['7d', 'new_narrative'],
    ],
  );
  const namedEvents = await eventsOf(named.id);
  assert.is(namedEvents.length, 1, 'the query naming it fired once');
  const e = namedEvents[0]!.event;
  assert.ok(isStory(e) && e.matches.length === 1 && e.window === '7d', JSON.stringify(e.matches));
  assert.match(e.narrative.url, new RegExp(`^${s.baseUrl}/narratives/`));
  assert.is((await api('GET', e.narrative.url.slice(s.baseUrl.length))).json.narrative.narrative_key, e.narrative.narrative_key);
  assert.is(e.narrative.dashboard_url, `${s.baseUrl}/ui/narrative.html?id=${encodeURIComponent(e.narrative.id)}`);
  assert.ok(e.posts.length > 0 && e.posts.every((p) => STORY.test(p.text ?? '')), "its posts carry the story's words");
  assert.not.ok(
    (await eventsOf(other.id)).some((x) => isStory(x.event)),
    'a query on something else did not',
  );
  // Delivered end to end: every event of the any watch POSTed to its URL, signed with the secret
  // its creation showed (the check docs/api.md gives receivers), the body the event itself.
  await pollUntil('the any watch events delivered', async () => (await eventsOf(any.id)).every((x) => x.status === 'delivered'), 30_000);
  for (const x of await eventsOf(any.id)) assertReceivedSigned(x.event, anySecret);

  // The answer with events matches the OpenAPI document's WatchDetail.
  await assertDocumented(`/alerts/${any.id}`, 'WatchDetail');
  const ids = new Map((await Promise.all([any, named, other].map((w) => eventsOf(w.id)))).flat().map((x) => [x.event.id, x.event.type]));

  // A server killed between the publish and its evaluation: the outbox never got the events. The next start evaluates the served generation.
  await s.close();
  fs.rmSync(path.join(dataDirLayout(dir).alerts, 'outbox'), { recursive: true, force: true });
  // This time behind a proxy: the events link to the address clients use (PUBLIC_BASE_URL, its trailing slash dropped).
  s = await testServer(dir, { ...ENV, PUBLIC_BASE_URL: 'https://api.example.com/api/' });
  await s.alerts.evaluator.idle();
  const again = s.alerts.evaluator.reports.at(-1)!;
  assert.equal([again.generation, again.previous, again.added], [second, first, report.added]);
  for (const { event: x } of await eventsOf(any.id)) {
    assert.match(x.narrative.url, /^https:\/\/api\.example\.com\/api\/narratives\/[^/]+$/);
    assert.is(x.narrative.dashboard_url, `https://api.example.com/api/ui/narrative.html?id=${encodeURIComponent(x.narrative.id)}`);
    // The link is the dashboard's page of the narrative on this server (the same path under its own address).
    const page = await fetch(`${s.baseUrl}${x.narrative.dashboard_url.slice('https://api.example.com/api'.length)}`);
    assert.equal([page.status, page.headers.get('content-type')], [200, 'text/html; charset=utf-8']);
  }
  const after = new Map((await Promise.all([any, named, other].map((w) => eventsOf(w.id)))).flat().map((x) => [x.event.id, x.event.type]));
  assert.equal([...after].sort(), [...ids].sort(), 'the same events, by the same ids');

  // A restart with the events kept: evaluated again, nothing added.
  await s.close();
  s = await testServer(dir, ENV);
  await s.alerts.evaluator.idle();
  const third = s.alerts.evaluator.reports.at(-1)!;
  assert.equal([third.generation, third.events.length, third.added], [second, report.events.length, 0]);
  assert.is((await eventsOf(any.id)).length, anyEvents.length);

  // The previous generation pruned: nothing to compare with, said and skipped.
  fs.rmSync(generationDir(dataDirLayout(dir), first), { recursive: true });
  assert.is(await s.alerts.evaluator.enqueue(s.snapshots.generation!, null), null);
});

test('a full rebuild on unchanged data fires no new_narrative: the stories it re-splits are the ones the previous generation had', async () => {
  const every = (
    await create({ target: { kind: 'any' }, windows: ['7d', '30d', '90d', 'all'], conditions: { new_narrative: true }, url: hook })
  ).json.watch as Watch;
  const previous = s.snapshots.generation!;
  await runPipeline(dir, ['run'], new Date(LATER.getTime() + 3_600_000), {}, { full: true });
  await s.snapshots.refresh();
  const rebuilt = s.snapshots.generation!;
  assert.is.not(rebuilt.id, previous.id);
  await s.alerts.evaluator.idle();
  const report = s.alerts.evaluator.reports.at(-1)!;
  assert.equal([report.generation, report.previous], [rebuilt.id, previous.id]);
  // What the rule by narrative_key alone would have called new.
  const rekeyed = rebuilt.maps.narratives
    .filter((ln) => !previous.maps.narrativeByKey.has(ln.narrative.narrative_key!))
    .map((ln) => `${ln.narrative.window_key} ${ln.narrative.label}`);
  const fresh = report.events.flatMap((e) => e.matches).filter((m) => m.condition === 'new_narrative');
  assert.equal(
    fresh.map((m) => `${m.window} ${m.label}`),
    [],
    `nothing new (narratives under keys the previous generation lacked: ${rekeyed.join(' | ') || 'none'})`,
  );
  assert.equal(await eventsOf(every.id), []);
});

test.run();
