// Jobs across a crash, and the 202 hand-over, with real server processes: a server parked at a
// failpoint of a running job is killed (SIGKILL) and a new one started on the same data dir; every
// job then finishes and is charged exactly once, whether the crash came before its result, after
// its result but before its charge, or after its charge. And a search parked before its ranking
// is handed to an insights job once SEARCH_BUDGET_MS has passed: 202, its hold released.
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { pollUntil } from '../../core/infra/wait-at-most.ts';
import { spawnTs, type Child } from '../helpers/child.ts';
import { pipedSampleDir } from '../helpers/pipeline.ts';
import { cleanupTmp, tmpDir } from '../helpers/tmp.ts';

let template: string;

test.before(async () => {
  template = await pipedSampleDir();
});

test.after(() => cleanupTmp());

interface Server {
  child: Child;
  baseUrl: string;
  key: string;
}

async function serve(dir: string, env: Record<string, string> = {}): Promise<Server> {
  const child = spawnTs('serve/main.ts', [], {
    DATA_DIR: dir,
    PORT: '0',
    HOST: '127.0.0.1',
    DEMO_CREDITS: '100',
    JOB_CONCURRENCY: '1',
    LOG_LEVEL: 'info',
    ...env,
  });
  await pollUntil('the server to listen', () => /"baseUrl":"([^"]+)"/.test(child.out()) || child.proc.exitCode !== null, 120_000);
  const baseUrl = /"baseUrl":"([^"]+)"/.exec(child.out())?.[1];
  if (!baseUrl) throw new Error(`server did not start:\n${child.out()}`);
  const key = (JSON.parse(fs.readFileSync(path.join(dir, 'demo-key.json'), 'utf8')) as { secret: string }).secret;
  return { child, baseUrl, key };
}

async function api(s: Server, method: string, p: string, body?: unknown): Promise<{ status: number; json: any; headers: Headers }> {
  const res = await fetch(`${s.baseUrl}${p}`, {
    method,
    headers: { 'x-api-key': s.key, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  return { status: res.status, json: await res.json(), headers: res.headers };
}

const balance = async (s: Server) => (await api(s, 'GET', '/usage?limit=500')).json;

async function stop(s: Server): Promise<void> {
  s.child.proc.kill('SIGTERM');
  await s.child.exited;
}

/** A copy of the piped data dir (generation and all), its own ledger and jobs. */
function freshDir(): string {
  const d = tmpDir();
  fs.cpSync(template, d, { recursive: true });
  return d;
}

for (const point of ['job.running', 'job.after-result', 'job.after-settle']) {
  test(`a server killed at ${point}: after a restart every job finishes, each charged once`, async () => {
    const dir = freshDir();
    const fpDir = tmpDir();
    const first = await serve(dir, { FAILPOINTS: point, FAILPOINT_DIR: fpDir });
    const before = (await balance(first)).balance;
    const a = await api(first, 'POST', '/intelligence/jobs', { kind: 'records', query: 'coffee', limit: 40, window: 'all' });
    const b = await api(first, 'POST', '/intelligence/jobs', { kind: 'stats', query: 'music', window: 'all' });
    assert.is(a.status, 202);
    assert.is(b.status, 202);
    await pollUntil(`the job to reach ${point}`, () => fs.existsSync(path.join(fpDir, point)), 60_000);
    first.child.proc.kill('SIGKILL');
    await first.child.exited;

    const second = await serve(dir);
    try {
      const done: any[] = [];
      for (const id of [a.json.jobId, b.json.jobId]) {
        let job: any = null;
        await pollUntil(
          `job ${id} to finish`,
          async () => ['succeeded', 'failed'].includes((job = (await api(second, 'GET', `/intelligence/jobs/${id}`)).json).status),
          60_000,
        );
        done.push(job);
      }
      const [records, stats] = done;
      assert.is(records.status, 'succeeded', JSON.stringify(records.error));
      assert.is(stats.status, 'succeeded', JSON.stringify(stats.error));
      assert.is(records.charged, records.result.content.length / 100);
      assert.is(stats.charged, 5);
      const after = await balance(second);
      // Exactly the two charges, once each, and no hold left open.
      assert.is(Math.round((before - after.balance) * 100) / 100, Math.round((records.charged + 5) * 100) / 100);
      assert.is(after.held, 0);
      const settlements = after.entries.filter((e: { type: string }) => e.type === 'settlement');
      assert.is(settlements.length, 2, JSON.stringify(after.entries));
    } finally {
      await stop(second);
    }
  });
}

test('a search over SEARCH_BUDGET_MS: 202 sync_budget_exceeded, its hold released, an insights job with the estimated cost', async () => {
  const dir = freshDir();
  const fpDir = tmpDir();
  const s = await serve(dir, { FAILPOINTS: 'search.rank', FAILPOINT_DIR: fpDir, SEARCH_BUDGET_MS: '50' });
  try {
    const before = await balance(s);
    const r = await api(s, 'POST', '/search', { query: 'coffee', limit: 100, window: '7d' });
    assert.is(r.status, 202);
    assert.equal(Object.keys(r.json).sort(), ['estimated_cost', 'jobId', 'reason', 'request_id', 'status', 'statusUrl']);
    assert.is(r.json.reason, 'sync_budget_exceeded');
    assert.is(r.json.estimated_cost, 22.5); // insights, 7d default depth 1,500 x 0.015
    assert.is(r.headers.get('x-service-credits-used'), '22.5');
    assert.ok(['queued', 'running', 'succeeded'].includes(r.json.status));
    const job = await api(s, 'GET', r.json.statusUrl.replace(/^\/api/, ''));
    assert.is(job.status, 200);
    assert.is(job.json.kind, 'insights');
    let done: any = null;
    await pollUntil(
      'the insights job',
      async () => ['succeeded', 'failed'].includes((done = (await api(s, 'GET', `/intelligence/jobs/${r.json.jobId}`)).json).status),
      60_000,
    );
    assert.is(done.status, 'succeeded');
    assert.ok(done.charged > 0, 'the insights job analysed some records');
    const after = await balance(s);
    // The search's hold of 1 credit was released in full; only the insights job was charged.
    assert.is(Math.round((before.balance - after.balance) * 1e6), Math.round(done.charged * 1e6));
    assert.ok(
      after.entries.some((e: { type: string; reason?: string }) => e.type === 'refund'),
      JSON.stringify(after.entries.slice(0, 3)),
    );
    // The same search again: its insights job is answered from the cache, so the 202 carries what was charged.
    const again = await api(s, 'POST', '/search', { query: 'coffee', limit: 100, window: '7d' });
    assert.is(again.status, 202);
    assert.equal(Object.keys(again.json).sort(), ['charged', 'jobId', 'reason', 'request_id', 'status', 'statusUrl']);
    assert.is(again.json.status, 'succeeded');
    assert.is(again.json.charged, done.charged);
    assert.is(again.headers.get('x-service-credits-used'), String(done.charged));
    const last = await balance(s);
    assert.is(Math.round((after.balance - last.balance) * 1e6), Math.round(done.charged * 1e6));
  } finally {
    await stop(s);
  }
});

test.run();
