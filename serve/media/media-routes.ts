// The media of posts (free reads, docs/api.md "Media"): GET /media/{uuid} lists a post's media
// (GET /media?uuids=... many posts' at once);
// GET /media/{uuid}/{index} answers a thumbnail of one of them (a video's first frame, or
// ?frame=k). Only media a served generation references are reachable: the uuid is looked up in
// the leased generation, the path comes from its snapshot row, never from the request.
import Router from '@koa/router';
import type { ApiState } from '../generation/api-state.ts';
import { z } from 'zod';
import type { LoadedGeneration } from '../generation/loaded-generation.ts';
import { HttpError } from '../http/http-error.ts';
import { intField, queryFrom } from '../http/query.ts';
import { confine, isImageFile, thumbnail, THUMBNAIL_TYPE } from './media-file.ts';
import type { MediaEntries, MediaEntry } from './media-entries.ts';
import { rowOfUuid } from './uuid-rows.ts';

export const mediaThumbnailQuery = z.object({
  frame: intField('frame', 0, 999).optional().describe("a video's frame (default 0, the first)"),
});

/** At most this many posts in one GET /media. */
const MEDIA_BATCH_MAX = 100;

export const mediaBatchQuery = z.object({
  uuids: z
    .string({ error: 'uuids is required: post uuids separated by commas' })
    .transform((s) => [...new Set(s.split(',').map((u) => u.trim()))].filter(Boolean))
    .pipe(
      z
        .array(z.string())
        .min(1, 'uuids is required: post uuids separated by commas')
        .max(MEDIA_BATCH_MAX, `uuids: at most ${MEDIA_BATCH_MAX} posts`),
    )
    .describe(`post uuids separated by commas, at most ${MEDIA_BATCH_MAX}`),
});

/** The path of a thumbnail under {base_url}. */
const thumbnailPath = (uuid: string, index: number) => `/media/${encodeURIComponent(uuid)}/${index}`;

async function entriesOf(media: MediaEntries, gen: LoadedGeneration, uuid: string): Promise<MediaEntry[]> {
  const row = rowOfUuid(gen.index, uuid);
  if (row === null) throw new HttpError(404, { error: `no post ${uuid} in generation ${gen.id}` });
  return media.of(gen.dir, row);
}

/** A local entry's file: the image itself, or the asked frame of a video. */
function fileOf(m: MediaEntry, frame: number | undefined): string | null {
  if (m.kind === 'video') return m.frames[frame ?? 0] ?? null;
  return frame === undefined || frame === 0 ? m.path : null;
}

/** Why a local entry's thumbnail would be refused (the thumbnail route's own checks), or null when it is servable. */
async function refusal(dataDir: string, file: string | null): Promise<string | null> {
  if (file === null) return 'this media has no local file';
  // The file may have left the landing folder since ingest, or never have been an image.
  const where = await confine(dataDir, file);
  if (!where.ok) return where.why;
  const image = await isImageFile(where.file);
  return image.ok ? null : image.why;
}

/**
 * A post's media as the list reads show them: a thumbnail path only where the thumbnail route
 * would serve one (so a client never asks for a refused file), else `refused` says why.
 */
function listed(dataDir: string, uuid: string, entries: MediaEntry[]) {
  return Promise.all(
    entries.map(async (m, index) => {
      const local = m.path !== null || m.frames.length > 0;
      const refused = local ? await refusal(dataDir, fileOf(m, 0)) : null;
      return {
        index,
        kind: m.kind,
        source: local ? 'local' : 'remote',
        url: local ? null : m.url,
        thumbnail: local && refused === null ? thumbnailPath(uuid, index) : null,
        refused,
        frames: m.frames.length,
      };
    }),
  );
}

export function mediaRouter(dataDir: string, media: MediaEntries): Router {
  const r = new Router<ApiState>();
  // Many posts' media in one read (a gallery's page of them): unknown uuids answer media null.
  r.get('/media', async (ctx) => {
    const gen = ctx.state.gen;
    const { uuids } = queryFrom(mediaBatchQuery, ctx.query);
    ctx.body = {
      generation: gen.id,
      items: await Promise.all(
        uuids.map(async (uuid) => {
          const row = rowOfUuid(gen.index, uuid);
          return { uuid, media: row === null ? null : await listed(dataDir, uuid, await media.of(gen.dir, row)) };
        }),
      ),
    };
  });
  r.get('/media/:uuid', async (ctx) => {
    const gen = ctx.state.gen;
    const uuid = ctx.params.uuid!;
    ctx.body = { uuid, generation: gen.id, items: await listed(dataDir, uuid, await entriesOf(media, gen, uuid)) };
  });
  r.get('/media/:uuid/:index', async (ctx) => {
    const gen = ctx.state.gen;
    const uuid = ctx.params.uuid!;
    const raw = ctx.params.index!;
    if (!/^\d{1,3}$/.test(raw)) throw new HttpError(400, { error: 'the media index must be an integer 0..999' });
    const { frame } = queryFrom(mediaThumbnailQuery, ctx.query);
    const entries = await entriesOf(media, gen, uuid);
    const m = entries[Number(raw)];
    if (!m) throw new HttpError(404, { error: `post ${uuid} has ${entries.length} media; no index ${raw}` });
    const rel = fileOf(m, frame);
    if (rel === null) {
      if (m.url) throw new HttpError(404, { error: 'remote media: open its url', url: m.url });
      throw new HttpError(404, { error: frame === undefined ? 'this media has no local file' : `no frame ${frame}` });
    }
    const where = await confine(dataDir, rel);
    if (!where.ok) throw new HttpError(404, { error: where.why });
    const t = await thumbnail(where.file);
    if (!t.ok) throw new HttpError(404, { error: t.why });
    ctx.set('Cache-Control', 'private, max-age=86400');
    ctx.set('ETag', t.etag);
    if (ctx.get('If-None-Match') === t.etag) {
      ctx.status = 304;
      return;
    }
    ctx.type = THUMBNAIL_TYPE;
    ctx.set('Content-Disposition', 'inline');
    ctx.body = t.bytes;
  });
  return r;
}
