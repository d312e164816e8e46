// The posts of a published generation that have a vector (of its text or visual space), read
// segment by segment (core/segments.ts): each segment's uuids.txt and <space>-vectors.f32 in row
// order. The quality benches score only the posts a clustering could see.
import fs from 'node:fs';
import path from 'node:path';
import { readSegmentUuids, segmentDir, type SegmentInfo } from '../../core/segments.ts';

export function uuidsWithVector(generationDir: string, space: 'text' | 'visual'): Set<string> {
  const manifest = JSON.parse(fs.readFileSync(path.join(generationDir, 'manifest.json'), 'utf8')) as { segments: SegmentInfo[] };
  const out = new Set<string>();
  for (const s of manifest.segments) {
    const dir = segmentDir(generationDir, s.id);
    const uuids = readSegmentUuids(dir);
    if (uuids.length === 0) continue;
    const raw = fs.readFileSync(path.join(dir, `${space}-vectors.f32`));
    const v = new Float32Array(raw.buffer, raw.byteOffset, raw.byteLength / 4);
    const dim = v.length / uuids.length;
    uuids.forEach((u, r) => {
      for (let j = r * dim; j < (r + 1) * dim; j++) {
        if (v[j] !== 0) {
          out.add(u);
          return;
        }
      }
    });
  }
  return out;
}
