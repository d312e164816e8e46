// The posts of a published generation that have a vector (of its text or visual space), read
// segment by segment (core/snapshots/segments.ts): each segment's uuids.txt and <space>-vectors.f32 in row
// order. The quality benches score only the posts a clustering could see; the real-data bench's
// density peer clusters the same vectors.
import fs from 'node:fs';
import path from 'node:path';
import { readSegmentUuids, segmentDir, type SegmentInfo } from '../../core/snapshots/segments.ts';

/** Every post with a non-zero vector: its uuid and its row of floats, segments in manifest order. */
function* postVectors(generationDir: string, space: 'text' | 'visual'): Generator<{ uuid: string; vector: Float32Array }> {
  const manifest = JSON.parse(fs.readFileSync(path.join(generationDir, 'manifest.json'), 'utf8')) as { segments: SegmentInfo[] };
  for (const s of manifest.segments) {
    const dir = segmentDir(generationDir, s.id);
    const uuids = readSegmentUuids(dir);
    if (uuids.length === 0) continue;
    const raw = fs.readFileSync(path.join(dir, `${space}-vectors.f32`));
    const v = new Float32Array(raw.buffer, raw.byteOffset, raw.byteLength / 4);
    const dim = v.length / uuids.length;
    for (let r = 0; r < uuids.length; r++) {
      const vector = v.subarray(r * dim, (r + 1) * dim);
      if (vector.some((x) => x !== 0)) yield { uuid: uuids[r]!, vector };
    }
  }
}

export function uuidsWithVector(generationDir: string, space: 'text' | 'visual'): Set<string> {
  const out = new Set<string>();
  for (const { uuid } of postVectors(generationDir, space)) out.add(uuid);
  return out;
}

/** The text vectors of the posts that have one (a deleted post's row is left out when `keep` says so). */
export function textVectors(
  generationDir: string,
  keep: (uuid: string) => boolean = () => true,
): { uuids: string[]; dim: number; vectors: Float32Array } {
  const uuids: string[] = [];
  const rows: Float32Array[] = [];
  for (const { uuid, vector } of postVectors(generationDir, 'text')) {
    if (!keep(uuid)) continue;
    uuids.push(uuid);
    rows.push(vector);
  }
  const dim = rows[0]?.length ?? 0;
  const vectors = new Float32Array(rows.length * dim);
  rows.forEach((r, i) => vectors.set(r, i * dim));
  return { uuids, dim, vectors };
}
