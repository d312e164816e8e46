// The graph worker's reads of a new generation's HNSW graphs, off its event loop. loadSearchIndex
// reads the graphs no held index has with hnswlib's readIndexSync on the calling thread, and the
// graph worker's thread is the one that answers every vector-candidate request: at 100k posts an
// incremental run rebuilds the one segment (127 MB of graphs), and searches queued behind the read
// for hundreds of ms. Read here first with hnswlib's readIndex (its own thread in libuv's pool,
// the graph worker keeps answering), the graphs are then lent to the load like a held
// generation's, so it reads none itself.
import fs from 'node:fs/promises';
import path from 'node:path';
import hnswlib from 'hnswlib-node';
import type { SearchIndex } from '../../core/ranking/search-index.ts';
import { GRAPHS, tailFile, type SegmentGraph } from '../../core/ranking/segment-graphs.ts';
import type { Manifest } from '../../core/snapshots/generations.ts';
import { segmentDir, withFirstRows } from '../../core/snapshots/segments.ts';
import { loadVectorSpace } from '../../core/vectors/vector-space.ts';

type Graph = SegmentGraph['index'];

async function readGraph(dim: number, dir: string, file: string): Promise<Graph> {
  const g = new hnswlib.HierarchicalNSW(GRAPHS.text.space, dim);
  await g.readIndex(path.join(dir, file));
  return g;
}

/**
 * The text graphs of the generation in `dir` that no index of `held` has (new segments, new window
 * tails of held ones), read asynchronously; as an index to lend first (a copy of the newest held
 * one whose graphs are those), or null when nothing is held or nothing is new (the load reads
 * nothing then either).
 */
export async function prefetchGraphs(dir: string, held: readonly SearchIndex[]): Promise<SearchIndex | null> {
  const base = held[held.length - 1];
  if (!base) return null;
  const manifest = JSON.parse(await fs.readFile(path.join(dir, 'manifest.json'), 'utf8')) as Manifest;
  const dim = loadVectorSpace(dir, 'text').dim;
  const heldGraph = (id: string): SegmentGraph | undefined => {
    for (const h of held) {
      const g = h.hnsw?.segments.find((x) => x.id === id);
      if (g) return g;
    }
    return undefined;
  };
  const fresh: SegmentGraph[] = [];
  for (const s of withFirstRows(manifest.segments ?? [])) {
    const had = heldGraph(s.id);
    if (!had && s.textPoints === 0) continue;
    const d = segmentDir(dir, s.id);
    const tails = [...(had?.tails ?? [])];
    for (const t of s.textTails ?? [])
      if (t.points > 0 && !tails.some((x) => x.from === t.from))
        tails.push({ from: t.from, points: t.points, index: await readGraph(dim, d, tailFile(t.from)), marked: new Set() });
    if (had && tails.length === had.tails.length) continue;
    fresh.push(
      had
        ? { ...had, tails }
        : {
            id: s.id,
            firstRow: s.firstRow,
            rows: s.rows,
            points: s.textPoints,
            index: await readGraph(dim, d, GRAPHS.text.file),
            marked: new Set(),
            tails,
          },
    );
  }
  return fresh.length > 0 ? { ...base, hnsw: { dim, segments: fresh } } : null;
}
