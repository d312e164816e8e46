// The media reads in the OpenAPI document (GET /media, /media/{uuid}, the thumbnails), their query
// parameters from the routes' own zod schemas.
import { queryParameters } from '../http/query.ts';
import { mediaBatchQuery, mediaThumbnailQuery } from '../media/media-routes.ts';
import { errors, int, json, nullable, obj, pathParam, readErrors, ref, str, type Schema } from './schema-kit.ts';

const mediaItem = obj({
  index: int,
  kind: { type: 'string', enum: ['image', 'video'] },
  source: { type: 'string', enum: ['local', 'remote'] },
  url: nullable('string'),
  thumbnail: nullable('string'),
  refused: {
    ...nullable('string'),
    description:
      'why a local media has no thumbnail (the file is gone, leads outside the landing folder or is not an image); null otherwise',
  },
  frames: int,
});

export function mediaPaths(): Record<string, Schema> {
  return {
    '/media': {
      get: {
        summary: "Many posts' media at once (free): each uuid with its media as GET /media/{uuid} lists them, or null when unknown",
        parameters: queryParameters(mediaBatchQuery),
        responses: { 200: json(ref('MediaBatch'), 'Media by post'), ...errors(400, 403, 429) },
      },
    },
    '/media/{uuid}': {
      get: {
        summary: "A post's media (free): local files with the path of their thumbnail, remote ones with their url",
        parameters: [pathParam('uuid', "the post's uuid")],
        responses: { 200: json(ref('MediaList'), 'Media'), ...readErrors },
      },
    },
    '/media/{uuid}/{index}': {
      get: {
        summary:
          "A thumbnail (WebP, at most 320 px) of a post's local media (free); a video's frame by ?frame=k. " +
          'Remote media: a 404 carrying the url',
        parameters: [
          pathParam('uuid', "the post's uuid"),
          { name: 'index', in: 'path', required: true, schema: { type: 'string', pattern: '^[0-9]{1,3}$' }, description: 'media index' },
          ...queryParameters(mediaThumbnailQuery),
        ],
        responses: {
          200: { description: 'The thumbnail', content: { 'image/webp': { schema: { type: 'string', format: 'binary' } } } },
          304: { description: 'Not modified (If-None-Match)' },
          ...readErrors,
        },
      },
    },
  };
}

export function mediaSchemas(): Record<string, Schema> {
  return {
    MediaList: obj({ uuid: str, generation: str, items: { type: 'array', items: mediaItem } }),
    MediaBatch: obj({
      generation: str,
      items: { type: 'array', items: obj({ uuid: str, media: nullable({ type: 'array', items: mediaItem }) }) },
    }),
  };
}
