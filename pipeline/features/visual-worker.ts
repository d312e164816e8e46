// Worker thread of the visual features: decodes each file with sharp to a 64x64 RGB thumbnail
// and turns an item's frames into its vector and elements (visual-compute.ts). sharp's decoding
// runs on libuv's pool; the pixel loops run on this thread, beside the other workers. A failing
// file fails only its own item: every item resolves to a result, never to a rejected batch.
import { readFileSync } from 'node:fs';
import { parentPort } from 'node:worker_threads';
import sharp from 'sharp';
import {
  DECODE_SIZE,
  frameFeatures,
  itemElements,
  itemFeatures,
  itemVector,
  type FrameFeatures,
  type VisualElements,
} from './visual-compute.ts';
import { semaphore } from '../../core/infra/semaphore.ts';

export interface WorkItem {
  i: number;
  kind: 'image' | 'video' | 'carousel';
  paths: string[];
}
export interface WorkBatch {
  batch: number;
  items: WorkItem[];
}
interface WorkResult {
  i: number;
  vector: Float32Array | null;
  elements: VisualElements | null;
  error?: string;
}
export type WorkReply = { ready: true } | { batch: number; results: WorkResult[] };

// Decodes in flight per worker: enough to keep libuv's threads busy while this thread computes.
const { acquire, release } = semaphore(3);

/** One file to frame features: EXIF-oriented, squeezed to 64x64 (aspect not kept), alpha over white, sRGB. */
async function decodeFrame(file: string): Promise<FrameFeatures> {
  await acquire();
  try {
    // Reading the bytes here (a worker thread may block) and decoding from memory costs less than
    // libvips opening the file or a round trip through the thread pool for the read.
    const bytes = readFileSync(file);
    const { data, info } = await sharp(bytes, { autoOrient: true })
      .resize(DECODE_SIZE, DECODE_SIZE, { fit: 'fill' })
      .flatten({ background: '#ffffff' })
      .toColourspace('srgb')
      .raw()
      .toBuffer({ resolveWithObject: true });
    return frameFeatures(data, info.width, info.height, info.channels);
  } finally {
    release();
  }
}

/** One line: libvips repeats its warnings, one per line. */
function message(err: unknown): string {
  const text = err instanceof Error ? err.message : String(err);
  return [
    ...new Set(
      text
        .split('\n')
        .map((l) => l.trim())
        .filter(Boolean),
    ),
  ].join('; ');
}

// Test hook (like core/infra/failpoints.ts): a worker that meets this exact path dies at once, so the
// tests can check that the pool survives a dying worker. Unset in normal use.
const CRASH_PATH = process.env.VISUAL_WORKER_CRASH_PATH;

async function processItem(item: WorkItem): Promise<WorkResult> {
  if (CRASH_PATH && item.paths.includes(CRASH_PATH)) process.exit(70);
  if (item.paths.length === 0) return { i: item.i, vector: null, elements: null, error: 'no media paths' };
  const frames = await Promise.all(
    item.paths.map(async (p) => {
      try {
        return { frame: await decodeFrame(p) };
      } catch (err) {
        return { error: `${p}: ${message(err)}` };
      }
    }),
  );
  const failed = frames.find((f) => 'error' in f);
  if (failed && 'error' in failed) return { i: item.i, vector: null, elements: null, error: failed.error };
  try {
    const f = itemFeatures(
      item.kind,
      frames.map((x) => (x as { frame: FrameFeatures }).frame),
    );
    return { i: item.i, vector: itemVector(f), elements: itemElements(f) };
  } catch (err) {
    return { i: item.i, vector: null, elements: null, error: message(err) };
  }
}

const port = parentPort;
if (port) {
  // Every input is read once; caching decoded images only costs memory.
  sharp.cache(false);
  port.on('message', (batch: WorkBatch) => {
    void Promise.all(batch.items.map(processItem)).then((results) => {
      const transfer = results.flatMap((r) => (r.vector ? [r.vector.buffer as ArrayBuffer] : []));
      port.postMessage({ batch: batch.batch, results } satisfies WorkReply, transfer);
    });
  });
  port.postMessage({ ready: true } satisfies WorkReply);
}
