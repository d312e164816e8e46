// `npm start` on an empty data directory: generates the corpus, runs the pipeline, publishes,
// serves the API with a demo key (printed), and keeps running its schedule until SIGTERM. A
// second start serves what is there with the same key, and a SIGTERM with searches in flight
// answers and settles every one the server took before the process exits.
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { dataDirLayout } from '../../core/infra/data-dir.ts';
import { readCurrent, readManifest } from '../../core/snapshots/generations.ts';
import { pollUntil } from '../../core/infra/wait-at-most.ts';
import { FileLedgerStore } from '../../ledger/file-ledger-store.ts';
import { spawnTs } from '../helpers/child.ts';
import { cleanupTmp, tmpDir } from '../helpers/tmp.ts';

const children: Array<ReturnType<typeof spawnTs>> = [];
test.after.each(() => {
  // A failed assertion must not leave a server running.
  for (const c of children.splice(0)) if (c.proc.exitCode === null) c.proc.kill('SIGKILL');
  cleanupTmp();
});

async function start(d: string) {
  const child = spawnTs('app/start.ts', [], {
    DATA_DIR: d,
    PORT: '0',
    DEFAULT_CORPUS_POSTS: '400',
    PIPELINE_SCHEDULE: '{"run":"0 0 1 1 *"}',
  });
  children.push(child);
  // The next-step block is the last thing a start prints.
  await pollUntil('start to publish and serve', () => /\n {2}stop: /.test(child.out()) || child.proc.exitCode !== null, 180_000);
  const baseUrl = /"baseUrl":"([^"]+)"/.exec(child.out())?.[1] ?? '';
  return { child, baseUrl };
}

async function health(baseUrl: string, key: string) {
  const res = await fetch(`${baseUrl}/health`, { headers: { 'x-api-key': key } });
  return { status: res.status, body: (await res.json()) as { generation?: string } };
}

test('first start generates the corpus, publishes generation 1 and keeps running; SIGTERM stops it', async () => {
  const d = tmpDir();
  const layout = dataDirLayout(d);
  const { child, baseUrl } = await start(d);
  assert.is(child.proc.exitCode, null, child.out());
  const key = /x-api-key: (\S+)/.exec(child.out())?.[1];
  assert.ok(key, 'the demo key is printed on the first start');
  // The next step, after everything else the start printed: the base URL, a request to try, the docs, keys.
  const notice = child.out().slice(child.out().indexOf('Demo account'));
  assert.match(notice, new RegExp(`Serving ${baseUrl.replace(/[.]/g, '\\.')}: generation g000001`));
  assert.match(notice, /try: +curl -s -H "x-api-key: sk_[^"]+" '[^']+\/narratives\/trending/);
  // Runnable as printed: the data directory is not the default ./data, so the hint names it.
  assert.match(notice, new RegExp(`keys: +DATA_DIR=${d} npm run admin -- accounts create`));
  assert.not.match(notice, /"msg":"access"/, 'no access log lines in it');
  assert.is(JSON.parse(fs.readFileSync(path.join(d, 'demo-key.json'), 'utf8')).secret, key);
  const h = await health(baseUrl, key!);
  assert.is(h.status, 200);
  assert.is(h.body.generation, 'g000001');
  assert.is(await readCurrent(layout), 'g000001');
  const m = await readManifest(layout, 'g000001');
  assert.ok(m.counts.posts! > 300, `posts published: ${m.counts.posts}`);
  // The ground truth lives outside landing/, so ingest can never take it for posts.
  assert.ok(fs.readdirSync(layout.truth).some((f) => f.endsWith('.truth.ndjson')));
  assert.not.ok(fs.readdirSync(layout.landing, { recursive: true }).some((f) => String(f).includes('truth')));
  assert.ok(fs.readdirSync(layout.quarantine).length > 0, 'planted bad records quarantined');
  child.proc.kill('SIGTERM');
  assert.is((await child.exited).code, 0, 'a graceful stop');

  // Second start: nothing regenerated or republished; the same demo key serves.
  const again = await start(d);
  assert.is(await readCurrent(layout), 'g000001');
  assert.is(fs.readdirSync(path.join(layout.landing)).length, 1);
  assert.not.ok(again.child.out().includes(key!), 'the secret is shown once only');
  assert.match(again.child.out(), /Demo API key: in .*demo-key\.json/);
  assert.is((await health(again.baseUrl, key!)).status, 200);
  // SIGTERM with searches in flight: the server stops accepting and answers what it took. A
  // request whose connection the closing server never read may fail at the socket (it was never
  // in flight); every request the server started must be answered 200 and settled, none dropped
  // half-way (that would show as a settlement without an answer, or a hold refunded at recovery).
  const body = JSON.stringify({ query: 'coffee bread music', limit: 5, window: 'all' });
  const searches = Array.from({ length: 20 }, () =>
    fetch(`${again.baseUrl}/search`, { method: 'POST', headers: { 'x-api-key': key!, 'content-type': 'application/json' }, body }).then(
      async (r) => ({ status: r.status, rows: ((await r.json()) as { content?: unknown[] }).content?.length ?? 0 }),
      () => ({ status: 0, rows: 0 }),
    ),
  );
  await Promise.race(searches);
  again.child.proc.kill('SIGTERM');
  const answered = await Promise.all(searches);
  assert.ok(
    answered.every((a) => a.status === 200 || a.status === 0),
    `statuses ${answered.map((a) => a.status)}`,
  );
  const ok = answered.filter((a) => a.status === 200).length;
  assert.ok(ok >= 1);
  assert.is((await again.child.exited).code, 0);
  const ledger = await FileLedgerStore.open({ dir: layout.ledger });
  try {
    const entries = (await ledger.usage(JSON.parse(fs.readFileSync(path.join(d, 'demo-key.json'), 'utf8')).account, { limit: 100 }))
      .entries;
    assert.is(entries.filter((e) => e.type === 'settlement').length, ok, 'each answered search is settled on disk, and only those');
    assert.is(entries.filter((e) => e.type === 'refund').length, 0, 'no search was dropped half-way');
    assert.is((await ledger.openHolds()).length, 0);
  } finally {
    await ledger.close();
  }
});

test.run();
