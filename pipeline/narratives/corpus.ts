// What the narratives stage reads about every snapshot row, in row order, as compact columns:
// identity, time, author, platform, engagement and tags from the work store's posts; the analysed
// terms from the features stage's doc-terms; tone and moods from enrichment.parquet; the text
// vectors from text-vectors.f32.
import fs from 'node:fs/promises';
import path from 'node:path';
import { EnrichmentStore, loadEnrichmentStore } from '../../core/enrichment/public.ts';
import { loadVectorSpace } from '../../core/vector-space.ts';
import { readDocTerms, type DocTerms } from '../features/doc-terms.ts';
import { materialiseSnapshotRows, snapshotChunks } from '../snapshot-rows.ts';
import type { StageContext } from '../stage.ts';

export interface NarrativeCorpus {
  rows: number;
  uuid: string[];
  publishedAt: Float64Array;
  /** NaN when unknown. */
  creator: Float64Array;
  platform: Uint8Array;
  platforms: string[];
  engagement: Float64Array;
  tags: string[][];
  terms: DocTerms;
  enrichment: EnrichmentStore;
  vectors: Float32Array;
  dim: number;
  /** 1 where the row has a text vector (every window's clustering reads it). */
  hasVector: Uint8Array;
}

interface PostRow { row_id: number; uuid: string; t: number; creator_id: number | null; platform: string; e: number; tags: string[] | null; [k: string]: unknown }

export async function loadNarrativeCorpus(ctx: StageContext, expectedRows: number): Promise<NarrativeCorpus> {
  const db = await ctx.db();
  const rows = await materialiseSnapshotRows(db, ctx.asOf.toISOString(),
    'uuid, published_at, creator_id, platform, like_count, comment_count, share_count, tags');
  if (rows !== expectedRows) throw new Error(`the snapshot has ${rows} rows but the features describe ${expectedRows}; run features and index first`);
  const uuid: string[] = new Array(rows);
  const publishedAt = new Float64Array(rows);
  const creator = new Float64Array(rows);
  const platform = new Uint8Array(rows);
  const platforms: string[] = [];
  const engagement = new Float64Array(rows);
  const tags: string[][] = new Array(rows);
  const select = `row_id, uuid, epoch_ms(published_at)::DOUBLE AS t, creator_id::DOUBLE AS creator_id, platform,
    (coalesce(like_count, 0) + coalesce(comment_count, 0) + coalesce(share_count, 0))::DOUBLE AS e, tags`;
  for await (const chunk of snapshotChunks<PostRow>(db, select, rows)) {
    for (const r of chunk) {
      const i = Number(r.row_id);
      uuid[i] = r.uuid;
      publishedAt[i] = Number(r.t);
      creator[i] = r.creator_id === null ? NaN : Number(r.creator_id);
      let p = platforms.indexOf(r.platform);
      if (p < 0) p = platforms.push(r.platform) - 1;
      platform[i] = p;
      engagement[i] = Number(r.e);
      tags[i] = (r.tags ?? []).map((t) => t.toLowerCase());
    }
  }
  const { artifacts, work } = ctx.layout;
  const terms = await readDocTerms(path.join(work, 'intermediate', 'doc-terms.bin'));
  const space = loadVectorSpace(artifacts, 'text');
  const raw = await fs.readFile(path.join(artifacts, 'text-vectors.f32'));
  const vectors = new Float32Array(raw.buffer, raw.byteOffset, raw.byteLength / 4);
  if (vectors.length !== rows * space.dim) throw new Error(`text-vectors.f32 holds ${vectors.length / space.dim} rows, expected ${rows}`);
  const hasVector = new Uint8Array(rows);
  for (let r = 0; r < rows; r++) hasVector[r] = vectors.subarray(r * space.dim, (r + 1) * space.dim).some((x) => x !== 0) ? 1 : 0;
  return {
    rows, uuid, publishedAt, creator, platform, platforms, engagement, tags, terms,
    enrichment: await loadEnrichmentStore(artifacts, rows), vectors, dim: space.dim, hasVector,
  };
}

/** Row i's analysed terms. */
export function rowTerms(c: NarrativeCorpus, i: number): string[] {
  const out: string[] = [];
  for (let j = c.terms.offsets[i]!; j < c.terms.offsets[i + 1]!; j++) out.push(c.terms.vocab[c.terms.ids[j]!]!);
  return out;
}
