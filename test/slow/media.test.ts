// The media route over a real generation (the committed sample plus posts of our own): thumbnails
// of the files a served post references, re-encoded as WebP with cache headers; remote media
// answered with their url; and files that leave the landing folder (a symlink out of it, to the
// data directory's secrets or outside it) or are not images refused, whatever their names say.
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import sharp from 'sharp';
import { pollUntil } from '../../core/infra/wait-at-most.ts';
import { confine, sniffImage } from '../../serve/media/media-file.ts';
import type { RunningServer } from '../../serve/server.ts';
import { testServer } from '../helpers/server.ts';
import { AS_OF, runPipeline, sampleDataDir } from '../helpers/pipeline.ts';
import { callApi } from '../helpers/http.ts';
import { cleanupTmp, tmpDir, writeLines } from '../helpers/tmp.ts';

let s: RunningServer;
let dir: string;
const call = (p: string, headers: Record<string, string> = {}) => callApi(s.baseUrl, s.demo.secret, 'GET', p, { headers });

async function raw(p: string, headers: Record<string, string> = {}) {
  return fetch(`${s.baseUrl}${p}`, { headers: { 'x-api-key': s.demo.secret, ...headers } });
}

function post(uuid: string, media: unknown[]) {
  return {
    uuid,
    platform: 'instagram',
    title: `media probe ${uuid}`,
    published_at: new Date(AS_OF.getTime() - 86_400_000).toISOString(),
    media,
  };
}

test.before(async () => {
  dir = sampleDataDir();
  const mine = path.join(dir, 'landing', 'mine');
  fs.mkdirSync(path.join(mine, 'media'), { recursive: true });
  await sharp({ create: { width: 900, height: 600, channels: 3, background: '#3b5bdb' } })
    .png()
    .toFile(path.join(mine, 'media', 'big.png'));
  fs.writeFileSync(path.join(mine, 'media', 'text.jpg'), 'not an image at all, whatever the name says\n');
  // Files that exist at ingest; turned into symlinks out of the landing folder after the run.
  fs.copyFileSync(path.join(mine, 'media', 'big.png'), path.join(mine, 'media', 'to-secret.png'));
  fs.copyFileSync(path.join(mine, 'media', 'big.png'), path.join(mine, 'media', 'to-outside.png'));
  writeLines(path.join(mine, 'posts.ndjson'), [
    post('media-big', [{ kind: 'image', path: 'media/big.png' }]),
    post('media-remote', [{ kind: 'image', url: 'https://cdn.example.com/a.jpg' }]),
    post('media-text', [{ kind: 'image', path: 'media/text.jpg' }]),
    post('media-secret', [{ kind: 'image', path: 'media/to-secret.png' }]),
    post('media-outside', [{ kind: 'image', path: 'media/to-outside.png' }]),
    post('media-none', []),
  ]);
  await runPipeline(dir);
  const outside = tmpDir();
  fs.writeFileSync(path.join(outside, 'x.png'), fs.readFileSync(path.join(mine, 'media', 'big.png')));
  fs.rmSync(path.join(mine, 'media', 'to-secret.png'));
  fs.symlinkSync(path.join(dir, 'demo-key.json'), path.join(mine, 'media', 'to-secret.png'));
  fs.rmSync(path.join(mine, 'media', 'to-outside.png'));
  fs.symlinkSync(path.join(outside, 'x.png'), path.join(mine, 'media', 'to-outside.png'));
  s = await testServer(dir, { SNAPSHOT_CHECK_MS: '100' });
});

test.after(async () => {
  await s?.close();
  cleanupTmp();
});

test('a post’s media listed: local entries with their thumbnail path, remote ones with their url', async () => {
  const big = await call('/media/media-big');
  assert.is(big.status, 200);
  assert.equal(big.json.items, [
    { index: 0, kind: 'image', source: 'local', url: null, thumbnail: '/media/media-big/0', refused: null, frames: 0 },
  ]);
  const remote = await call('/media/media-remote');
  assert.equal(remote.json.items, [
    { index: 0, kind: 'image', source: 'remote', url: 'https://cdn.example.com/a.jpg', thumbnail: null, refused: null, frames: 0 },
  ]);
  assert.equal((await call('/media/media-none')).json.items, []);
  // A file that leads out of the landing folder, is gone since ingest or is not an image has no
  // thumbnail path (a client would only get the route's 404), and says why.
  for (const [uuid, why] of [
    ['media-secret', /outside the landing folder/],
    ['media-outside', /outside the landing folder/],
    ['media-text', /not an image/],
  ] as const) {
    const item = (await call(`/media/${uuid}`)).json.items[0];
    assert.is(item.thumbnail, null, uuid);
    assert.match(item.refused, why, uuid);
  }
  const unknown = await call('/media/no-such-post');
  assert.is(unknown.status, 404);
  assert.match(unknown.json.error, /no post no-such-post/);
});

test('many posts’ media in one read: each as its own list reads it, unknown ones null, at most 100', async () => {
  const r = await call('/media?uuids=media-big,media-remote,no-such-post,media-none,media-big');
  assert.is(r.status, 200);
  assert.equal(
    r.json.items.map((x: { uuid: string }) => x.uuid),
    ['media-big', 'media-remote', 'no-such-post', 'media-none'],
  );
  for (const x of r.json.items)
    assert.equal(x.media, x.uuid === 'no-such-post' ? null : (await call(`/media/${x.uuid}`)).json.items, x.uuid);
  const many = Array.from({ length: 101 }, (_, i) => `u${i}`).join(',');
  assert.match((await call(`/media?uuids=${many}`)).json.error, /at most 100/);
  assert.match((await call('/media')).json.error, /uuids is required/);
});

test('a thumbnail: WebP of at most 320 px, nosniff, cached by ETag (304), private cache', async () => {
  const res = await raw('/media/media-big/0');
  assert.is(res.status, 200);
  assert.is(res.headers.get('content-type'), 'image/webp');
  assert.is(res.headers.get('x-content-type-options'), 'nosniff');
  assert.match(res.headers.get('cache-control') ?? '', /^private, max-age=\d+$/);
  const bytes = Buffer.from(await res.arrayBuffer());
  assert.equal(sniffImage(bytes), 'webp');
  const meta = await sharp(bytes).metadata();
  assert.equal([meta.width, meta.height], [320, 213]);
  const again = await raw('/media/media-big/0', { 'if-none-match': res.headers.get('etag')! });
  assert.is(again.status, 304);
});

test("a video's frames by ?frame=k; a sample image thumbnail decodes", async () => {
  const posts = fs
    .readFileSync(path.join(dir, 'landing', 'sample', 'posts-00001.ndjson'), 'utf8')
    .split('\n')
    .filter(Boolean);
  // The sample plants malformed lines (quarantined by ingest): only records that parse.
  const records = posts.flatMap((l) => {
    try {
      return [JSON.parse(l)];
    } catch {
      return [];
    }
  });
  const video = records.find((p) => p.media?.[0]?.kind === 'video' && p.media[0].frames?.length >= 2);
  assert.ok(video, 'the sample has a video with frames');
  const list = await call(`/media/${video.uuid}`);
  assert.is(list.json.items[0].frames, video.media[0].frames.length);
  for (const frame of [0, 1]) {
    const res = await raw(`/media/${video.uuid}/0?frame=${frame}`);
    assert.is(res.status, 200, `frame ${frame}`);
    assert.ok((await sharp(Buffer.from(await res.arrayBuffer())).metadata()).width! > 0);
  }
  const beyond = await call(`/media/${video.uuid}/0?frame=${video.media[0].frames.length}`);
  assert.is(beyond.status, 404);
  assert.is((await call(`/media/${video.uuid}/0?frame=x`)).status, 400);
});

test('refused: a symlink to the data directory’s secrets or outside it, a non-image, remote media, bad indexes', async () => {
  for (const uuid of ['media-secret', 'media-outside']) {
    const r = await call(`/media/${uuid}/0`);
    assert.is(r.status, 404, uuid);
    assert.match(r.json.error, /outside the landing folder/);
    assert.not.match(JSON.stringify(r.json), /sk_/);
  }
  const text = await call('/media/media-text/0');
  assert.is(text.status, 404);
  assert.match(text.json.error, /not an image/);
  const remote = await call('/media/media-remote/0');
  assert.is(remote.status, 404);
  assert.is(remote.json.url, 'https://cdn.example.com/a.jpg');
  assert.is((await call('/media/media-big/1')).status, 404);
  assert.is((await call('/media/media-big/-1')).status, 400);
  assert.is((await call('/media/media-big/..%2F..%2Fdemo-key.json')).status, 400);
  assert.is((await callApi(s.baseUrl, 'sk_wrong', 'GET', '/media/media-big/0')).status, 403);
});

test('a new generation: its media are read from its own snapshot, the old one’s still answer while held', async () => {
  writeLines(path.join(dir, 'landing', 'mine', 'later.ndjson'), [post('media-later', [{ kind: 'image', path: 'media/big.png' }])]);
  await runPipeline(dir, ['run'], new Date(AS_OF.getTime() + 3_600_000));
  await pollUntil('the swap to g000002', async () => (await call('/health')).json.generation === 'g000002', 30_000);
  const later = await call('/media/media-later');
  assert.is(later.status, 200);
  assert.is(later.json.generation, 'g000002');
  assert.is(later.json.items[0].thumbnail, '/media/media-later/0');
  assert.is((await raw('/media/media-later/0')).headers.get('content-type'), 'image/webp');
  assert.equal((await call('/media/media-big')).json.items[0].thumbnail, '/media/media-big/0');
});

test('confine: paths with .. or absolute ones are refused before the file system is asked', async () => {
  assert.equal(await confine(dir, '../etc/passwd'), { ok: false, why: 'the media path leaves the data directory' });
  assert.equal(await confine(dir, '/etc/passwd'), { ok: false, why: 'the media path leaves the data directory' });
  assert.equal(await confine(dir, 'landing/mine/media/../../../demo-key.json'), {
    ok: false,
    why: 'the media path leaves the data directory',
  });
  assert.equal(await confine(dir, 'demo-key.json'), { ok: false, why: 'the media path leads outside the landing folder' });
  const ok = await confine(dir, 'landing/mine/media/big.png');
  assert.ok(ok.ok);
  assert.equal(sniffImage(new Uint8Array([0xff, 0xd8, 0xff, 0xe0])), 'jpeg');
  assert.equal(sniffImage(new TextEncoder().encode('<svg xmlns=')), null);
});

test.run();
