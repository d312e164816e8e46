// The free map reads' kept answers (serve/maps/read-cache.ts): the same bytes as a read built afresh
// (a server with READ_CACHE_MB=0 beside it), answered from the cache the second time; emergent
// narratives, errors and reads that are not map reads never kept.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { testServer } from '../helpers/server.ts';
import { pipedSampleDir } from '../helpers/pipeline.ts';
import { cleanupTmp } from '../helpers/tmp.ts';
import type { RunningServer } from '../../serve/server.ts';

let cached: RunningServer;
let fresh: RunningServer;
test.before(async () => {
  // Two copies of one run on the sample: the same generation, a ledger each.
  cached = await testServer(await pipedSampleDir());
  fresh = await testServer(await pipedSampleDir(), { READ_CACHE_MB: '0' });
});
test.after(async () => {
  await cached?.close();
  await fresh?.close();
  cleanupTmp();
});

async function read(s: RunningServer, path: string): Promise<{ status: number; text: string }> {
  const res = await fetch(`${s.baseUrl}${path}`, { headers: { 'x-api-key': s.demo.secret } });
  return { status: res.status, text: await res.text() };
}

test('a kept read is the same bytes as one built afresh, and the second read comes from the cache', async () => {
  const trending = JSON.parse((await read(fresh, '/narratives/trending?window=all&limit=5')).text) as { items: Array<{ id: string }> };
  assert.ok(trending.items.length > 0, 'the sample has narratives');
  const id = trending.items[0]!.id;
  const paths = [
    '/narratives/trending?window=all&limit=5',
    '/narratives/trending?window=7d&limit=20&sort=momentum',
    `/narratives/${id}`,
    `/narratives/${id}/trajectory`,
    '/themes?window=all',
    '/intelligence/patterns?scope=all&limit=5',
    '/narratives/search?q=lineup&window=all',
  ];
  for (const p of paths) {
    const want = await read(fresh, p);
    const hits = cached.readCache.hits;
    const first = await read(cached, p);
    const second = await read(cached, p);
    assert.is(first.status, want.status, p);
    assert.is(first.text, want.text, `${p}: the first read`);
    assert.is(second.text, want.text, `${p}: the kept read`);
    if (want.status === 200) assert.is(cached.readCache.hits, hits + 1, `${p}: the second read answered from the cache`);
  }
  assert.is(fresh.readCache.hits + fresh.readCache.entries, 0, 'READ_CACHE_MB=0 keeps nothing');
  // /health says what the cache holds and has answered.
  const health = JSON.parse((await read(cached, '/health')).text) as { read_cache: Record<string, number> };
  assert.equal(health.read_cache, {
    entries: cached.readCache.entries,
    bytes: cached.readCache.bytes,
    hits: cached.readCache.hits,
    misses: cached.readCache.misses,
  });
  assert.ok(health.read_cache.hits! > 0 && health.read_cache.entries! > 0);
});

test('an error is never kept; neither is an emergent narrative, nor a read that is not a map read', async () => {
  const entries = cached.readCache.entries;
  assert.is((await read(cached, '/narratives/nope-000')).status, 404);
  assert.is((await read(cached, '/narratives/em-0123456789abcdef')).status, 404);
  await read(cached, '/usage?limit=5');
  await read(cached, '/health');
  assert.is(cached.readCache.entries, entries);
});

test.run();
