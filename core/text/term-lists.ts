// Per-row lists of words as ids into a vocabulary, a segment's file format for what the features
// stage analysed once so no later reader analyses the text again: doc-terms.bin (each row's terms,
// what the index stage builds BM25 from) and label-words.bin (each row's label words, what a search
// answer's emergent narratives are labelled from: core/maps/row-label-words.ts). Layout: [u32 header length][header JSON]
// [vocabulary, '\n'-joined UTF-8, padded to 4 bytes][u32 offsets x (rows+1)][u32 ids x total].
import fs from 'node:fs/promises';
import { writeFileAtomic } from '../infra/durable-fs.ts';

export interface TermLists {
  vocab: string[];
  /** Row i's term ids are ids[offsets[i] .. offsets[i+1]). */
  offsets: Uint32Array;
  ids: Uint32Array;
}

export async function writeTermLists(file: string, vocab: Map<string, number>, docs: Uint32Array[]): Promise<void> {
  const words = new Array<string>(vocab.size);
  for (const [w, id] of vocab) words[id] = w;
  const total = docs.reduce((a, d) => a + d.length, 0);
  const offsets = new Uint32Array(docs.length + 1);
  const ids = new Uint32Array(total);
  let at = 0;
  docs.forEach((d, i) => {
    ids.set(d, at);
    at += d.length;
    offsets[i + 1] = at;
  });
  const text = Buffer.from(words.join('\n'), 'utf8');
  const pad = Buffer.alloc((4 - (text.length % 4)) % 4);
  const header = Buffer.from(JSON.stringify({ rows: docs.length, terms: words.length, total, vocabBytes: text.length }), 'utf8');
  const hl = Buffer.alloc(4);
  hl.writeUInt32LE(header.length);
  const headPad = Buffer.alloc((4 - ((4 + header.length) % 4)) % 4);
  await writeFileAtomic(file, Buffer.concat([hl, header, headPad, text, pad, Buffer.from(offsets.buffer), Buffer.from(ids.buffer)]));
}

export async function readTermLists(file: string): Promise<TermLists> {
  const buf = await fs.readFile(file);
  const hl = buf.readUInt32LE(0);
  const h = JSON.parse(buf.subarray(4, 4 + hl).toString('utf8')) as { rows: number; terms: number; total: number; vocabBytes: number };
  let at = 4 + hl;
  at += (4 - (at % 4)) % 4;
  const vocab =
    h.terms === 0
      ? []
      : buf
          .subarray(at, at + h.vocabBytes)
          .toString('utf8')
          .split('\n');
  at += h.vocabBytes;
  at += (4 - (at % 4)) % 4;
  const aligned = new Uint8Array(buf.length - at);
  aligned.set(buf.subarray(at));
  const offsets = new Uint32Array(aligned.buffer, 0, h.rows + 1);
  const ids = new Uint32Array(aligned.buffer, (h.rows + 1) * 4, h.total);
  return { vocab, offsets, ids };
}
