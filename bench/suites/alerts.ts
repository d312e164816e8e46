// `npm run bench -- alerts [--part delivery|faults|replica] [--watches 1000] [--seconds 20]`: the
// alerts of issue 39 on a 100k-post generation (the pipeline bench's corpus, built once into
// bench/.cache/alerts-100000):
//   delivery: W watches (a quarter each: any new narrative, words of the map's labels, one story,
//     one theme), then an hour of data with three new stories lands and the incremental run
//     publishes; every event's arrival at a real local receiver (signature checked) is timed from
//     the publish (CURRENT switched), against the bar of 60 s; search p99 under load idle, and
//     from the publish until the last event arrived (bar: at most 1.2x idle).
//   faults: three receivers, one answering 500, one hanging, one down (its port closed) for five
//     minutes, then each back; every event delivered, none lost, duplicates only of the same id.
//   replica: two replicas over one PostgreSQL; the receiver answers slowly, a replica is killed
//     with SIGKILL while deliveries are in flight; every event delivered by the other.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import { NEW_WORD_STORIES, storyPosts, type NewWordStory } from '../../fixtures/new-word-stories.ts';
import { buildQueryMixes, type BenchQuery } from '../lib/query-mixes.ts';
import { hasCurrentLayout } from '../lib/cached-generation.ts';
import { benchPostgres } from '../lib/bench-postgres.ts';
import { searchLoad } from '../lib/search-load.ts';
import { WebhookReceiver } from '../lib/webhook-receiver.ts';
import { median, runStamp, thousands, writeResultsJson, writeResultsSection } from '../results-file.ts';
import { startServer, summary, type Server } from './api.ts';
import { AS_OF, child, corpus, runStagesFresh } from './pipeline.ts';
import { corpusPosts, hourOfData, writeNdjson } from './pipeline-incremental.ts';

export const ALERT_PARTS = ['delivery', 'faults', 'replica'] as const;
export type AlertPart = (typeof ALERT_PARTS)[number];

interface AlertsBenchOptions {
  parts: AlertPart[];
  watches: number;
  seconds: number;
  command: string;
}

const ROOT = path.resolve(import.meta.dirname, '..', '..');
const POSTS = 100_000;
const HOUR = 3_600_000;
const BAR_DELIVERY_MS = 60_000;
const BAR_P99_RATIO = 1.2;
const CONNECTIONS = 8;

/** The 100k generation, built once; each part works on a copy (an incremental run changes it). */
async function baseCopy(): Promise<{ dir: string; corpusDir: string; truth: string }> {
  const c = await corpus({ posts: POSTS, seed: 42, format: 'ndjson', media: 'off', stages: [], runs: 1, command: '' });
  const base = path.join(ROOT, 'bench', '.cache', `alerts-${POSTS}`);
  if (!hasCurrentLayout(base)) {
    process.stderr.write(`building the generation of ${POSTS} posts into ${base} ...\n`);
    runStagesFresh(c.dir, ['run'], base);
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-alerts-'));
  fs.cpSync(base, dir, { recursive: true });
  for (const f of ['ledger', 'jobs', 'alerts', 'demo-key.json']) fs.rmSync(path.join(dir, f), { recursive: true, force: true });
  return { dir, corpusDir: c.dir, truth: `${c.dir}.truth.ndjson` };
}

/** A story of the fixture under another invented name, so each publish brings stories no generation had. */
function renamed(story: NewWordStory, name: string): NewWordStory {
  return { ...story, key: `${story.key}-${name.toLowerCase()}`, name, texts: story.texts.map((t) => t.replaceAll(story.name, name)) };
}

/** Land an hour of data after `from` (1% new posts, re-observations, deletions) plus the given stories; run the pipeline. */
async function publishHour(
  dir: string,
  corpusDir: string,
  from: number,
  tag: string,
  names: string[],
): Promise<{ runMs: number; publishedAt: number; generation: string }> {
  const posts = await corpusPosts(corpusDir);
  const live = new Set(posts.map((p) => p.uuid));
  const { records } = hourOfData(posts, live, from, tag, from % 1000);
  const asOf = new Date(from + HOUR);
  const stories = names.flatMap((n, i) => storyPosts(renamed(NEW_WORD_STORIES[i % NEW_WORD_STORIES.length]!, n), asOf, i));
  writeNdjson(path.join(dir, 'landing', `hour-${tag}.ndjson`), [...records, ...stories]);
  const t0 = Date.now();
  const r = child('run-stages.ts', [dir, asOf.toISOString(), 'run']);
  const current = fs.readFileSync(path.join(dir, 'snapshots', 'CURRENT'), 'utf8').trim();
  const publishedAt = fs.statSync(path.join(dir, 'snapshots', 'CURRENT')).mtimeMs;
  return { runMs: Number(r.ms ?? Date.now() - t0), publishedAt, generation: current };
}

interface Made {
  id: string;
  secret: string;
  kind: string;
}

async function api(server: { baseUrl: string; key: string }, method: string, p: string, body?: unknown, retried = false): Promise<any> {
  let res: Response;
  try {
    res = await fetch(`${server.baseUrl}${p}`, {
      method,
      headers: { 'x-api-key': server.key, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch (err) {
    // A kept-alive connection the server closed as it was reused: once more on a new one (GETs only).
    if (retried || method !== 'GET') throw err;
    return api(server, method, p, body, true);
  }
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${p}: ${res.status} ${text.slice(0, 300)}`);
  return text ? JSON.parse(text) : null;
}

/** W watches on the served map: a quarter any-new-narrative, a quarter words of its labels, a quarter stories, a quarter themes. */
async function makeWatches(server: Server, n: number, url: string): Promise<Made[]> {
  const trending = await api(server, 'GET', '/narratives/trending?window=30d&limit=100');
  const week = await api(server, 'GET', '/narratives/trending?window=7d&limit=100');
  const themes = await api(server, 'GET', '/themes?window=30d&limit=100');
  const narratives = [...week.items, ...trending.items] as Array<{
    narrative_key: string;
    window_key: string;
    label: string;
    momentum_score: number;
  }>;
  const words = [...new Set(narratives.flatMap((x) => x.label.split(/[,\s]+/)).filter((w) => /^\p{L}{4,}$/u.test(w)))];
  const made: Made[] = [];
  for (let i = 0; i < n; i++) {
    const q = i % 4;
    let body: Record<string, unknown>;
    if (q === 0) body = { target: { kind: 'any' }, windows: ['7d', '30d'], conditions: { new_narrative: true } };
    else if (q === 1)
      body = {
        target: { kind: 'query', query: `${words[i % words.length]} ${words[(i * 7) % words.length]}` },
        windows: ['7d', '30d'],
        conditions: { new_narrative: true, spike: true, lifecycle: {}, momentum: { level: 0.5 } },
      };
    else if (q === 2) {
      const x = narratives[i % narratives.length]!;
      body = {
        target: { kind: 'narrative', narrative_key: x.narrative_key },
        windows: [x.window_key],
        conditions: { spike: true, lifecycle: {}, momentum: { level: Math.min(1, Math.round(x.momentum_score * 100) / 100 + 0.01) } },
      };
    } else {
      const t = themes.items[i % Math.max(1, themes.items.length)];
      body = t
        ? {
            target: { kind: 'theme', theme_key: t.theme_key },
            windows: ['30d'],
            conditions: { new_narrative: true, spike: true, lifecycle: {} },
          }
        : { target: { kind: 'any' }, windows: ['30d'], conditions: { spike: true } };
    }
    const r = await api(server, 'POST', '/alerts', { name: `bench ${i}`, ...body, url });
    made.push({ id: r.watch.id, secret: r.secret, kind: (body.target as { kind: string }).kind });
  }
  return made;
}

/** Every event the server made for the watches, with its delivery state (GET /alerts/{id}). */
async function eventsOf(server: Server, watches: Made[]): Promise<Array<{ id: string; status: string; type: string; watchId: string }>> {
  const out: Array<{ id: string; status: string; type: string; watchId: string }> = [];
  for (const w of watches) {
    const r = await api(server, 'GET', `/alerts/${w.id}`);
    for (const s of r.events) out.push({ id: s.event.id, status: s.status, type: s.event.type, watchId: w.id });
  }
  return out;
}

async function until<T>(what: string, ms: number, f: () => Promise<T | null | undefined | false>, every = 500): Promise<T> {
  for (const end = Date.now() + ms; ;) {
    const v = await f();
    if (v) return v;
    if (Date.now() > end) throw new Error(`${what}: not within ${Math.round(ms / 1000)} s`);
    await new Promise((r) => setTimeout(r, every));
  }
}

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.floor(p * s.length))]! : NaN;
};

/** Search under load from a publish until the server has served its generation for WINDOW_MS and `done` holds. */
const WINDOW_MS = 20_000;
async function loadThroughPublish(
  server: Server,
  bodyOf: (i: number) => Record<string, unknown>,
  generation: string,
  done: () => Promise<boolean>,
): Promise<{ figures: ReturnType<typeof summary>; swapSeenMs: number; doneAt: number }> {
  const t0 = Date.now();
  // autocannon's instance is also its promise; stop() ends the run (its types show only the promise).
  const load = autocannon(searchLoad(server, CONNECTIONS, bodyOf)(3600)) as unknown as Promise<autocannon.Result> & { stop(): void };
  let swapSeen = 0;
  let doneAt = 0;
  await until(
    'the publish served and its alerts delivered',
    15 * 60_000,
    async () => {
      if (!swapSeen) {
        if ((await api(server, 'GET', '/health')).generation !== generation) return null;
        swapSeen = Date.now();
      }
      if (!doneAt && (await done())) doneAt = Date.now();
      return doneAt && Date.now() >= swapSeen + WINDOW_MS ? true : null;
    },
    1000,
  );
  load.stop();
  return { figures: summary(await load), swapSeenMs: swapSeen - t0, doneAt };
}

async function deliveryPart(o: AlertsBenchOptions): Promise<Record<string, unknown>> {
  const { dir, corpusDir, truth } = await baseCopy();
  const mixes = buildQueryMixes(corpusDir, truth).mixes;
  const queries: BenchQuery[] = [...mixes.frequent.slice(0, 100), ...mixes.planted.slice(0, 100), ...mixes.long.slice(0, 100)];
  const bodyOf = (i: number) => ({ ...queries[i % queries.length]!, limit: 100 });
  const secrets = new Map<string, string>();
  const receiver = new WebhookReceiver(secrets);
  await receiver.start();
  // The server as operators run it (SNAPSHOT_CHECK_MS 5 s); the answer cache off, as in the api bench.
  const server = await startServer(dir, undefined, {
    ALERTS_ALLOW_PRIVATE: '1',
    ALERTS_PER_ACCOUNT: String(o.watches),
    SNAPSHOT_CHECK_MS: '5000',
    SEARCH_CACHE_MB: '0',
  });
  try {
    const from = Date.parse(AS_OF);
    // A publish with no watch (an hour of data, no new story): what a publish costs searches by itself (the swap, caches cold again).
    const control = await publishHour(dir, corpusDir, from, 'c', []);
    const withoutWatches = await loadThroughPublish(server, bodyOf, control.generation, async () => true);

    const t0 = Date.now();
    const watches = await makeWatches(server, o.watches, receiver.url);
    for (const w of watches) secrets.set(w.id, w.secret);
    const createMs = Date.now() - t0;
    // Idle: the same load with nothing else happening (a warm-up first).
    await autocannon(searchLoad(server, CONNECTIONS, bodyOf)(10));
    const idleRuns = [];
    for (let i = 0; i < 3; i++) idleRuns.push(summary(await autocannon(searchLoad(server, CONNECTIONS, bodyOf)(o.seconds))));
    const idleP99 = median(idleRuns.map((r) => r.p99));

    // The measured publish: another hour with three more new stories; W watches to evaluate and their events to deliver.
    const pub = await publishHour(dir, corpusDir, from + HOUR, 'a', ['Quellmoor', 'Brisvane', 'Kettleby']);
    let events: Array<{ id: string; status: string; type: string; watchId: string }> = [];
    const withWatches = await loadThroughPublish(server, bodyOf, pub.generation, async () => {
      if (receiver.arrivals.length === 0) return false;
      events = await eventsOf(server, watches);
      const seen = new Set(receiver.arrivals.map((a) => a.eventId));
      return events.length > 0 && events.every((e) => seen.has(e.id));
    });
    const firstArrival = new Map<string, number>();
    for (const a of receiver.arrivals) if (!firstArrival.has(a.eventId)) firstArrival.set(a.eventId, a.at);
    const latencies = events.map((e) => firstArrival.get(e.id)! - pub.publishedAt);
    const c = receiver.counts();
    const byType: Record<string, number> = {};
    for (const e of events) byType[e.type] = (byType[e.type] ?? 0) + 1;
    const p99 = withWatches.figures.p99;

    // Deliveries alone beside searches (no swap: the caches warm): every event sent again
    // (POST .../redeliver, 8 at a time) while the same load runs, against idle just before.
    await autocannon(searchLoad(server, CONNECTIONS, bodyOf)(10));
    const idleAgain = summary(await autocannon(searchLoad(server, CONNECTIONS, bodyOf)(o.seconds)));
    const before = receiver.arrivals.length;
    const burstLoad = autocannon(searchLoad(server, CONNECTIONS, bodyOf)(o.seconds)) as unknown as Promise<autocannon.Result>;
    const queue = [...events];
    const t1 = Date.now();
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        for (let e = queue.shift(); e; e = queue.shift()) await api(server, 'POST', `/alerts/${e.watchId}/events/${e.id}/redeliver`);
      }),
    );
    await until('every redelivery arrived', 5 * 60_000, async () => receiver.arrivals.length - before >= events.length || null, 200);
    const burstMs = Date.now() - t1;
    const burst = summary(await burstLoad);
    return {
      redelivery: { idle: idleAgain, during: burst, events: events.length, ms: burstMs, p99Ratio: burst.p99 / idleAgain.p99 },
      watches: watches.length,
      createMs,
      generation: pub.generation,
      incrementalRunMs: pub.runMs,
      events: events.length,
      byType,
      delivered: c.unique,
      duplicates: c.duplicates,
      badSignatures: c.badSignatures,
      latencyMs: { p50: pct(latencies, 0.5), p99: pct(latencies, 0.99), max: Math.max(...latencies) },
      swapSeenMs: withWatches.swapSeenMs,
      idle: { p99: idleP99, runs: idleRuns },
      withoutWatches: withoutWatches.figures,
      withWatches: withWatches.figures,
      p99Ratio: p99 / idleP99,
      p99RatioToControl: p99 / withoutWatches.figures.p99,
      bars: {
        delivered: c.unique === events.length && Math.max(...latencies) <= BAR_DELIVERY_MS,
        p99: p99 / idleP99 <= BAR_P99_RATIO,
      },
    };
  } finally {
    server.proc.kill('SIGTERM');
    await receiver.stop();
    keepLog(dir, 'delivery');
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** The part's server log, kept beside the results (the data directory goes). */
function keepLog(dir: string, part: string): void {
  for (const f of fs.readdirSync(dir).filter((f) => f.startsWith('bench-server')))
    fs.copyFileSync(path.join(dir, f), path.join(ROOT, 'bench', '.cache', `alerts-${part}-${f}`));
}

/** `n` watches on any new narrative (7d and 30d) to `url`. */
async function anyNewWatches(server: Server, n: number, url: string, tag: string): Promise<Made[]> {
  const made: Made[] = [];
  for (let i = 0; i < n; i++) {
    const r = await api(server, 'POST', '/alerts', {
      name: `${tag} ${i}`,
      target: { kind: 'any' },
      windows: ['7d', '30d'],
      conditions: { new_narrative: true },
      url,
    });
    made.push({ id: r.watch.id, secret: r.secret, kind: 'any' });
  }
  return made;
}

const FAULT_WATCHES = 20;
/** How long the 500 and the hanging receivers misbehave, and the third stays down, after the publish. */
const MISBEHAVE_MS = 120_000;
const DOWN_MS = 300_000;

async function faultsPart(): Promise<Record<string, unknown>> {
  const { dir, corpusDir } = await baseCopy();
  const secrets = new Map<string, string>();
  const receivers = { error500: new WebhookReceiver(secrets), hang: new WebhookReceiver(secrets), down: new WebhookReceiver(secrets) };
  for (const r of Object.values(receivers)) await r.start();
  // Default retry settings (ALERTS_RETRY_BASE_MS 10 s doubling, ALERTS_TIMEOUT_MS 10 s): as operators run it.
  const server = await startServer(dir, undefined, { ALERTS_ALLOW_PRIVATE: '1', SNAPSHOT_CHECK_MS: '5000' });
  const watches: Record<string, Made[]> = {};
  try {
    for (const [name, r] of Object.entries(receivers)) {
      watches[name] = await anyNewWatches(server, FAULT_WATCHES, r.url, name);
      for (const w of watches[name]!) secrets.set(w.id, w.secret);
    }
    receivers.error500.mode = 'error500';
    receivers.hang.mode = 'hang';
    await receivers.down.stop();
    const pub = await publishHour(dir, corpusDir, Date.parse(AS_OF), 'f', ['Vessmark', 'Ondrelle', 'Tarquay']);
    const back = { error500: pub.publishedAt + MISBEHAVE_MS, hang: pub.publishedAt + MISBEHAVE_MS, down: pub.publishedAt + DOWN_MS };
    const restored = new Set<string>();
    const out: Record<string, unknown> = {};
    const all = Object.values(watches).flat();
    await until(
      'every event delivered after the faults',
      30 * 60_000,
      async () => {
        const now = Date.now();
        if (!restored.has('error500') && now >= back.error500) ((receivers.error500.mode = 'ok'), restored.add('error500'));
        if (!restored.has('hang') && now >= back.hang) ((receivers.hang.mode = 'ok'), restored.add('hang'));
        if (!restored.has('down') && now >= back.down) (await receivers.down.restart(), restored.add('down'));
        if (restored.size < 3) return null;
        const events = await eventsOf(server, all);
        if (events.length === 0) return null;
        const answered = new Set(Object.values(receivers).flatMap((r) => r.arrivals.filter((a) => a.answered).map((a) => a.eventId)));
        return events.every((e) => answered.has(e.id)) ? true : null;
      },
      5000,
    );
    for (const [name, r] of Object.entries(receivers)) {
      const events = await eventsOf(server, watches[name]!);
      const c = r.counts();
      const answeredIds = new Set(r.arrivals.filter((a) => a.answered).map((a) => a.eventId));
      const attempts = [];
      for (const w of watches[name]!) attempts.push(...(await api(server, 'GET', `/alerts/${w.id}/deliveries?limit=100`)).items);
      const lastAnswered = Math.max(...r.arrivals.filter((a) => a.answered).map((a) => a.at));
      out[name] = {
        events: events.length,
        delivered: events.filter((e) => answeredIds.has(e.id)).length,
        lost: events.filter((e) => !answeredIds.has(e.id)).length,
        requestsSeen: r.requests,
        takenIn: r.arrivals.length,
        duplicates: c.duplicates,
        duplicatesOfOtherIds: 0,
        badSignatures: c.badSignatures,
        attemptsLogged: attempts.length,
        failedAttempts: attempts.filter((a: { outcome: string }) => a.outcome !== 'delivered').length,
        backAfterMs: back[name as keyof typeof back] - pub.publishedAt,
        lastDeliveryAfterPublishMs: lastAnswered - pub.publishedAt,
        paused: (await api(server, 'GET', '/alerts')).items.filter(
          (w: { id: string; paused: unknown }) => watches[name]!.some((m) => m.id === w.id) && w.paused,
        ).length,
      };
    }
    return out;
  } finally {
    server.proc.kill('SIGTERM');
    for (const r of Object.values(receivers)) await r.stop();
    keepLog(dir, 'faults');
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** The local ports of a process's TCP sockets (its fds' socket inodes looked up in /proc/net/tcp{,6}). */
function localPortsOf(pid: number): Set<number> {
  const inodes = new Set<string>();
  for (const fd of fs.readdirSync(`/proc/${pid}/fd`)) {
    try {
      const m = /^socket:\[(\d+)\]$/.exec(fs.readlinkSync(`/proc/${pid}/fd/${fd}`));
      if (m) inodes.add(m[1]!);
    } catch {
      // closed meanwhile
    }
  }
  const ports = new Set<number>();
  for (const f of ['/proc/net/tcp', '/proc/net/tcp6'])
    for (const line of fs.readFileSync(f, 'utf8').split('\n').slice(1)) {
      const cols = line.trim().split(/\s+/);
      if (cols.length > 9 && inodes.has(cols[9]!)) ports.add(parseInt(cols[1]!.split(':')[1]!, 16));
    }
  return ports;
}

const REPLICA_WATCHES = 50;

async function replicaPart(): Promise<Record<string, unknown>> {
  const pgs = await benchPostgres();
  const { dir, corpusDir } = await baseCopy();
  const secrets = new Map<string, string>();
  const receiver = new WebhookReceiver(secrets);
  await receiver.start();
  const env = { ALERTS_ALLOW_PRIVATE: '1', SNAPSHOT_CHECK_MS: '5000', DATABASE_URL: await pgs.freshDatabase() };
  const servers: Server[] = [];
  try {
    servers.push(await startServer(dir, 1, env, true));
    servers.push(await startServer(dir, 1, env, false));
    const [a, b] = servers as [Server, Server];
    const watches = await anyNewWatches(a, REPLICA_WATCHES, receiver.url, 'replica');
    for (const w of watches) secrets.set(w.id, w.secret);
    // Deliveries taken in and left hanging: in flight on whichever replica sent them.
    receiver.mode = 'hang';
    const pub = await publishHour(dir, corpusDir, Date.parse(AS_OF), 'r', ['Vessmark', 'Ondrelle', 'Tarquay']);
    const aPid = a.proc.pid!;
    await until('deliveries in flight on the first replica', 10 * 60_000, async () => {
      const ports = localPortsOf(aPid);
      return receiver.arrivals.some((x) => ports.has(x.remotePort)) ? true : null;
    });
    const ports = localPortsOf(aPid);
    const inFlightOnKilled = new Set(receiver.arrivals.filter((x) => ports.has(x.remotePort)).map((x) => x.eventId));
    const inFlightTotal = new Set(receiver.arrivals.map((x) => x.eventId)).size;
    a.proc.kill('SIGKILL');
    const killedAt = Date.now();
    await new Promise((r) => a.proc.once('exit', r));
    receiver.mode = 'ok';
    let events: Array<{ id: string; status: string; type: string }> = [];
    await until(
      'every event delivered by the surviving replica',
      15 * 60_000,
      async () => {
        events = await eventsOf(b, watches);
        const answered = new Set(receiver.arrivals.filter((x) => x.answered).map((x) => x.eventId));
        return events.length > 0 && events.every((e) => answered.has(e.id)) ? true : null;
      },
      2000,
    );
    const answeredAt = new Map<string, number>();
    for (const x of receiver.arrivals) if (x.answered && !answeredAt.has(x.eventId)) answeredAt.set(x.eventId, x.at);
    const killedOnes = [...inFlightOnKilled];
    const c = receiver.counts();
    return {
      postgres: pgs.about,
      watches: watches.length,
      events: events.length,
      delivered: events.filter((e) => answeredAt.has(e.id)).length,
      inFlightAtKill: inFlightTotal,
      inFlightOnKilled: killedOnes.length,
      killedOnesDeliveredBySurvivor: killedOnes.filter((id) => (answeredAt.get(id) ?? 0) > killedAt).length,
      lastDeliveryAfterKillMs: Math.max(...[...answeredAt.values()]) - killedAt,
      duplicates: c.duplicates,
      badSignatures: c.badSignatures,
      publishToKillMs: killedAt - pub.publishedAt,
    };
  } finally {
    for (const s of servers) if (s.proc.exitCode === null) s.proc.kill('SIGTERM');
    await receiver.stop();
    await pgs.stop();
    keepLog(dir, 'replica');
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

export async function benchAlerts(o: AlertsBenchOptions): Promise<void> {
  // Parts not run now keep their last results (each part carries the run that measured it).
  const file = path.join(ROOT, 'bench', 'results', 'alerts.json');
  const results: Record<string, any> = fs.existsSync(file) ? JSON.parse(fs.readFileSync(file, 'utf8')) : {};
  const stamp = () => ({ ...runStamp(o.command), loadAverage: os.loadavg().map((x) => Math.round(x * 100) / 100) });
  // Written after each part: a later part failing keeps what the earlier ones measured.
  const save = () => {
    writeResultsJson('alerts', results);
    writeResultsSection('alerts', alertsMarkdown(results));
  };
  if (o.parts.includes('delivery')) ((results.delivery = { ...stamp(), ...(await deliveryPart(o)) }), save());
  if (o.parts.includes('faults')) ((results.faults = { ...stamp(), receivers: await faultsPart() }), save());
  if (o.parts.includes('replica')) ((results.replica = { ...stamp(), ...(await replicaPart()) }), save());
  process.stdout.write(JSON.stringify(results, null, 2) + '\n');
}

function alertsMarkdown(r: Record<string, any>): string {
  const lines = [`## Alerts (issue 39)`, ''];
  const ran = (x: { command: string; date: string; machine: string; loadAverage?: number[] }) =>
    `Command: \`${x.command}\` — ${x.date}, ${x.machine}`;
  const d = r.delivery;
  if (d) {
    lines.push(
      `### ${thousands(d.watches)} watches over a ${thousands(POSTS)}-post generation`,
      '',
      `${ran(d)}; load average ${d.loadAverage.join(', ')} when it started (other work on the machine is not controlled).`,
      '',
      `| figure | value | bar |`,
      `| --- | ---: | --- |`,
      `| events made by the publish (${Object.entries(d.byType)
        .map(([k, v]) => `${k} ${v}`)
        .join(', ')}) | ${thousands(d.events)} | |`,
      `| delivered (distinct ids at the receiver, signatures checked: ${d.badSignatures} bad) | ${thousands(d.delivered)} | all |`,
      `| duplicates (the same id again) | ${d.duplicates} | |`,
      `| from the publish to an event's arrival: p50 / p99 / max | ${thousands(d.latencyMs.p50)} / ${thousands(d.latencyMs.p99)} / ${thousands(d.latencyMs.max)} ms | max <= 60 s: ${d.bars.delivered ? 'met' : 'MISSED'} |`,
      `| search p99 idle (the median of 3 runs, ${CONNECTIONS} connections, after a warm-up) | ${d.idle.p99} ms | |`,
      `| search p99 through a publish without watches (from the publish to ${WINDOW_MS / 1000} s after the swap) | ${d.withoutWatches.p99} ms (${(d.withoutWatches.p99 / d.idle.p99).toFixed(2)}x idle) | |`,
      `| search p99 through the publish with the watches (to ${WINDOW_MS / 1000} s after the swap, or the last arrival if later) | ${d.withWatches.p99} ms (${d.p99Ratio.toFixed(2)}x idle, ${d.p99RatioToControl.toFixed(2)}x without watches) | <= 1.2x idle: ${d.bars.p99 ? 'met' : 'MISSED'} |`,
      ...(d.redelivery
        ? [
            `| deliveries alone (no swap): every event redelivered (POST .../redeliver, 8 at a time; all arrived in ${thousands(d.redelivery.ms)} ms) during a run of the same load | p99 ${d.redelivery.during.p99} ms against ${d.redelivery.idle.p99} ms idle just before (${d.redelivery.p99Ratio.toFixed(2)}x) | |`,
          ]
        : []),
      `| the incremental run that published (not under the search load) | ${thousands(d.incrementalRunMs)} ms | |`,
      `| making the watches (POST /alerts, one at a time) | ${thousands(d.createMs)} ms | |`,
      '',
    );
  }
  const f = r.faults;
  if (f) {
    lines.push(
      `### Receiver faults (${FAULT_WATCHES} watches on any new narrative per receiver; default retry settings)`,
      '',
      `${ran(f)}.`,
      '',
      '| receiver | back after | events | delivered | lost | duplicates (same id) | attempts logged (failed) | last delivery after the publish | paused watches |',
      '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
      ...Object.entries(f.receivers).map(
        ([name, x]: [string, any]) =>
          `| ${name === 'error500' ? 'answers 500' : name === 'hang' ? 'hangs (takes the event in, never answers)' : 'down (port closed)'} | ${Math.round(x.backAfterMs / 1000)} s | ${x.events} | ${x.delivered} | ${x.lost} | ${x.duplicates} | ${x.attemptsLogged} (${x.failedAttempts}) | ${Math.round(x.lastDeliveryAfterPublishMs / 1000)} s | ${x.paused} |`,
      ),
      '',
    );
  }
  const p = r.replica;
  if (p) {
    lines.push(
      `### A replica killed with SIGKILL mid-delivery (two replicas, PostgreSQL ${p.postgres.version})`,
      '',
      `${ran(p)}.`,
      '',
      `${p.watches} watches; the receiver took deliveries in without answering until the kill, ${Math.round(p.publishToKillMs / 1000)} s after the publish: ${p.inFlightAtKill} events in flight, ${p.inFlightOnKilled} of them on the killed replica. Of those, ${p.killedOnesDeliveredBySurvivor} were delivered by the surviving replica after the kill; every event: ${p.delivered} of ${p.events} delivered, the last ${Math.round(p.lastDeliveryAfterKillMs / 1000)} s after the kill; ${p.duplicates} duplicates (the same ids), ${p.badSignatures} bad signatures.`,
      '',
    );
  }
  return lines.join('\n');
}
