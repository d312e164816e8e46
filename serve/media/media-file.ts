// A media file of a post, made safe to send: its path confined to DATA_DIR/landing (where ingest
// took it from) after every symlink is resolved, its type read from its first bytes (never from
// its name), and what is sent a thumbnail re-encoded by sharp: the bytes a browser receives are
// always our own WebP, whatever the file held.
import { createHash } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { LRUCache } from 'lru-cache';
import sharp from 'sharp';

/** Longest side of a thumbnail, in pixels. */
const THUMBNAIL_PX = 320;
export const THUMBNAIL_TYPE = 'image/webp';

/** The image formats taken, by their magic bytes. */
export function sniffImage(head: Uint8Array): 'jpeg' | 'png' | 'gif' | 'webp' | null {
  const at = (i: number, ...bytes: number[]) => bytes.every((b, k) => head[i + k] === b);
  if (at(0, 0xff, 0xd8, 0xff)) return 'jpeg';
  if (at(0, 0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a)) return 'png';
  if (at(0, 0x47, 0x49, 0x46, 0x38)) return 'gif';
  if (at(0, 0x52, 0x49, 0x46, 0x46) && at(8, 0x57, 0x45, 0x42, 0x50)) return 'webp';
  return null;
}

type Confined = { ok: true; file: string } | { ok: false; why: string };

/** `rel` (relative to DATA_DIR) as a real file inside DATA_DIR/landing, or why not. */
export async function confine(dataDir: string, rel: string): Promise<Confined> {
  if (path.isAbsolute(rel) || rel.split(/[\\/]/).includes('..')) return { ok: false, why: 'the media path leaves the data directory' };
  let root: string;
  let file: string;
  try {
    root = await fs.realpath(path.join(dataDir, 'landing'));
    file = await fs.realpath(path.join(dataDir, rel));
  } catch {
    return { ok: false, why: 'the media file is gone' };
  }
  if (!file.startsWith(root + path.sep)) return { ok: false, why: 'the media path leads outside the landing folder' };
  const st = await fs.stat(file);
  if (!st.isFile()) return { ok: false, why: 'the media path is not a file' };
  return { ok: true, file };
}

/** Whether a confined file's first bytes are an image's (what the media list and a thumbnail both check), or why not. */
export async function isImageFile(file: string): Promise<{ ok: true } | { ok: false; why: string }> {
  const fh = await fs.open(file, 'r');
  const head = new Uint8Array(16);
  try {
    await fh.read(head, 0, 16, 0);
  } finally {
    await fh.close();
  }
  return sniffImage(head) ? { ok: true } : { ok: false, why: 'the media file is not an image (JPEG, PNG, GIF or WebP)' };
}

const thumbs = new LRUCache<string, Buffer>({ maxSize: 32 * 1024 * 1024, sizeCalculation: (b) => b.length });

type Thumbnail = { ok: true; bytes: Buffer; etag: string } | { ok: false; why: string };

/** The thumbnail of a confined file (cached by path, size and mtime), or why there is none. */
export async function thumbnail(file: string): Promise<Thumbnail> {
  const st = await fs.stat(file);
  const where = createHash('sha256').update(file).digest('base64url').slice(0, 16);
  const etag = `"t${THUMBNAIL_PX}-${st.size.toString(36)}-${Math.floor(st.mtimeMs).toString(36)}-${where}"`;
  const hit = thumbs.get(etag);
  if (hit) return { ok: true, bytes: hit, etag };
  const image = await isImageFile(file);
  if (!image.ok) return image;
  try {
    const bytes = await sharp(file, { failOn: 'error', limitInputPixels: 64_000_000 })
      .rotate()
      .resize(THUMBNAIL_PX, THUMBNAIL_PX, { fit: 'inside', withoutEnlargement: true })
      .webp({ quality: 72 })
      .toBuffer();
    thumbs.set(etag, bytes);
    return { ok: true, bytes, etag };
  } catch {
    return { ok: false, why: 'the media file could not be decoded' };
  }
}
