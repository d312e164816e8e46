// Visual features on the committed sample's real media files: shape, determinism, planted-motif
// structure, motion, per-item failure, and the element vocabularies.
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { MOTIFS } from '../../fixtures/motifs.ts';
import {
  COLOR_NAMES,
  computeVisualFeatures,
  LAYOUT_VOCABULARY,
  MOTION_VOCABULARY,
  STYLE_VOCABULARY,
  VISUAL_BLOCKS,
  VISUAL_DIM,
  VISUAL_FEATURES_VERSION,
  type VisualElements,
  type VisualItem,
} from '../../pipeline/features/visual.ts';
import { ROOT } from '../helpers/child.ts';
import { cleanupTmp, tmpDir } from '../helpers/tmp.ts';

test.after.each(cleanupTmp);

const SAMPLE = path.join(ROOT, 'fixtures', 'sample');
interface SamplePost {
  uuid: string;
  motif: string | null;
  truthKind: string;
  item: VisualItem;
}

function samplePosts(): SamplePost[] {
  const truth = new Map<string, { motif: string | null; kind: string }>();
  for (const line of fs.readFileSync(path.join(SAMPLE, 'truth.ndjson'), 'utf8').split('\n')) {
    if (!line.includes('"type":"post"')) continue;
    const r = JSON.parse(line);
    truth.set(r.uuid, { motif: r.motif ?? null, kind: r.kind });
  }
  const out: SamplePost[] = [];
  const seen = new Set<string>();
  const abs = (p: string) => path.join(SAMPLE, 'posts', p);
  for (const line of fs.readFileSync(path.join(SAMPLE, 'posts', 'posts-00001.ndjson'), 'utf8').split('\n')) {
    let r: { uuid?: string; media?: Array<{ kind?: string; path?: string; frames?: string[] }> };
    try {
      r = JSON.parse(line);
    } catch {
      continue; // planted bad records
    }
    const t = r?.uuid ? truth.get(r.uuid) : undefined;
    if (!t || !r.uuid || seen.has(r.uuid) || !Array.isArray(r.media) || r.media.length === 0) continue;
    seen.add(r.uuid);
    const m0 = r.media[0]!;
    const item: VisualItem =
      m0.kind === 'video'
        ? { key: r.uuid, kind: 'video', paths: (m0.frames ?? []).map(abs) }
        : r.media.length > 1
          ? { key: r.uuid, kind: 'carousel', paths: r.media.map((m) => abs(m.path ?? '')) }
          : { key: r.uuid, kind: 'image', paths: [abs(m0.path ?? '')] };
    out.push({ uuid: r.uuid, motif: t.motif, truthKind: t.kind, item });
  }
  return out;
}

const posts = samplePosts();
const items = posts.map((p) => p.item);
const progress: number[] = [];
const results = await computeVisualFeatures(items, {
  onProgress: (done, total) => {
    assert.is(total, items.length);
    progress.push(done);
  },
});

const cos = (a: Float32Array, b: Float32Array) => {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i]! * b[i]!;
  return s;
};
const motionBlock = VISUAL_BLOCKS.find((b) => b.name === 'motion')!;
const motionOf = (v: Float32Array) => v.subarray(motionBlock.offset, motionBlock.offset + motionBlock.size);
const ok = (key: string): { vector: Float32Array; elements: VisualElements } => {
  const r = results.get(key);
  if (!r?.vector || !r.elements) throw new Error(`no result for ${key}: ${r?.error}`);
  return { vector: r.vector, elements: r.elements };
};

test('the sample has images, carousels and videos; every one gets a unit vector of VISUAL_DIM and elements', () => {
  const kinds = new Set(items.map((i) => i.kind));
  assert.equal([...kinds].sort(), ['carousel', 'image', 'video']);
  assert.ok(items.length > 300, `items ${items.length}`);
  assert.is(results.size, items.length);
  assert.is(
    VISUAL_DIM,
    VISUAL_BLOCKS.reduce((a, b) => a + b.size, 0),
  );
  for (const it of items) {
    const r = results.get(it.key)!;
    assert.is(r.error, undefined, r.error);
    const v = r.vector!;
    assert.ok(v instanceof Float32Array);
    assert.is(v.length, VISUAL_DIM);
    assert.ok(Math.abs(Math.sqrt(cos(v, v)) - 1) < 1e-5);
    assert.ok(v.every(Number.isFinite));
  }
  assert.is(progress.at(-1), items.length);
  for (let i = 1; i < progress.length; i++) assert.ok(progress[i]! > progress[i - 1]!);
});

test('deterministic to the bit: recomputed with one thread, in another order, the vectors are identical', async () => {
  const subset = [...items].reverse().filter((_, i) => i % 3 === 0);
  const again = await computeVisualFeatures(subset, { threads: 1 });
  for (const it of subset) {
    const a = results.get(it.key)!,
      b = again.get(it.key)!;
    assert.equal(Buffer.from(b.vector!.buffer), Buffer.from(a.vector!.buffer), it.key);
    assert.equal(b.elements, a.elements);
  }
});

test('posts of the same planted motif are closer than posts of different motifs, and nearest neighbours share the motif', () => {
  // Distinct pictures only: reposts reuse the original's files and near-duplicates redraw them.
  const planted = posts.filter((p) => p.motif !== null && (p.truthKind === 'original' || p.truthKind === 'noise'));
  assert.ok(planted.length > 200, `planted ${planted.length}`);
  const vecs = planted.map((p) => ok(p.uuid).vector);
  let same = 0,
    nSame = 0,
    diff = 0,
    nDiff = 0,
    hits = 0;
  for (let i = 0; i < planted.length; i++) {
    let best = -Infinity,
      bestJ = -1;
    for (let j = 0; j < planted.length; j++) {
      if (i === j) continue;
      const c = cos(vecs[i]!, vecs[j]!);
      if (j > i) {
        if (planted[i]!.motif === planted[j]!.motif) {
          same += c;
          nSame++;
        } else {
          diff += c;
          nDiff++;
        }
      }
      if (c > best) {
        best = c;
        bestJ = j;
      }
    }
    if (planted[bestJ]!.motif === planted[i]!.motif) hits++;
  }
  const counts = new Map<string, number>();
  for (const p of planted) counts.set(p.motif!, (counts.get(p.motif!) ?? 0) + 1);
  // Chance: the probability that a random other post has the same motif.
  let chance = 0;
  for (const c of counts.values()) chance += (c / planted.length) * ((c - 1) / (planted.length - 1));
  const purity = hits / planted.length;
  const meanSame = same / nSame,
    meanDiff = diff / nDiff;
  console.log(
    `visual: ${planted.length} distinct motif posts, ${counts.size} motifs; mean cosine same ` +
      `motif ${meanSame.toFixed(3)}, different ${meanDiff.toFixed(3)}; 1-NN motif purity ` +
      `${purity.toFixed(3)} (chance ${chance.toFixed(3)})`,
  );
  assert.ok(meanSame - meanDiff > 0.3, `same ${meanSame} vs different ${meanDiff}`);
  assert.ok(purity >= 0.9, `purity ${purity}`);
  assert.ok(purity > 5 * chance, `purity ${purity} vs chance ${chance}`);
});

test('videos show motion; stills and carousels none', () => {
  let moving = 0,
    videos = 0;
  for (const it of items) {
    const r = ok(it.key);
    const m = motionOf(r.vector);
    if (it.kind === 'video') {
      videos++;
      assert.ok(
        m.some((x) => x > 0),
        `video ${it.key} has no motion`,
      );
      assert.ok(r.elements.motion !== null && (MOTION_VOCABULARY as readonly string[]).includes(r.elements.motion));
      if (r.elements.motion !== 'static') moving++;
    } else {
      assert.ok(
        m.every((x) => x === 0),
        `${it.kind} ${it.key} has motion`,
      );
      assert.is(r.elements.motion, null);
    }
  }
  // The planted videos drift and grow from frame to frame.
  assert.ok(videos > 100);
  assert.ok(moving / videos >= 0.9, `moving ${moving}/${videos}`);
});

test('elements come from the documented vocabularies', () => {
  for (const it of items) {
    const e = ok(it.key).elements;
    assert.ok(e.dominantColors.length >= 1 && e.dominantColors.length <= 3);
    assert.is(new Set(e.dominantColors).size, e.dominantColors.length);
    for (const c of e.dominantColors) assert.ok((COLOR_NAMES as readonly string[]).includes(c), c);
    assert.is(new Set(e.aestheticStyle).size, e.aestheticStyle.length);
    for (const s of e.aestheticStyle) assert.ok((STYLE_VOCABULARY as readonly string[]).includes(s), s);
    assert.ok((LAYOUT_VOCABULARY as readonly string[]).includes(e.layout), e.layout);
  }
  // Every vocabulary is in use on the sample except what its pictures cannot show.
  const used = new Set(items.flatMap((it) => ok(it.key).elements.aestheticStyle));
  assert.ok(used.size >= 8, [...used].join(','));
});

test('layout names agree with the planted layouts of single motif pictures', () => {
  const expected: Record<string, string[]> = {
    centered: ['centered'],
    left: ['left-heavy'],
    right: ['right-heavy'],
    top: ['top-heavy'],
    bottom: ['bottom-heavy'],
    scattered: ['scattered'],
    full: ['uniform'],
    corner: ['left-heavy', 'top-heavy'],
  };
  const singles = posts.filter((p) => p.motif !== null && p.item.kind === 'image');
  let agree = 0;
  for (const p of singles) {
    const def = MOTIFS.find((m) => m.id === p.motif)!;
    if (expected[def.layout]!.includes(ok(p.uuid).elements.layout)) agree++;
  }
  assert.ok(singles.length > 50);
  assert.ok(agree / singles.length >= 0.85, `layout agreement ${agree}/${singles.length}`);
});

test('a missing file and a corrupt file fail their own items; the rest succeed unchanged', async () => {
  const dir = tmpDir('visual-');
  const corrupt = path.join(dir, 'corrupt.jpg');
  const good = items.find((i) => i.kind === 'image')!;
  const bytes = fs.readFileSync(good.paths[0]!);
  fs.writeFileSync(corrupt, bytes.subarray(0, 120));
  const truncated = path.join(dir, 'truncated.jpg');
  fs.writeFileSync(truncated, bytes.subarray(0, Math.floor(bytes.length * 0.6)));
  const text = path.join(dir, 'not-an-image.png');
  fs.writeFileSync(text, 'hello, not a picture\n');
  const missing = path.join(dir, 'missing.jpg');
  const video = items.find((i) => i.kind === 'video')!;
  const rest = items.slice(0, 40);
  const batch: VisualItem[] = [
    { key: 'missing', kind: 'image', paths: [missing] },
    ...rest.slice(0, 20),
    { key: 'corrupt', kind: 'image', paths: [corrupt] },
    { key: 'truncated', kind: 'image', paths: [truncated] },
    { key: 'text', kind: 'carousel', paths: [good.paths[0]!, text] },
    { key: 'video-missing-frame', kind: 'video', paths: [video.paths[0]!, missing, ...video.paths.slice(2)] },
    { key: 'empty', kind: 'image', paths: [] },
    ...rest.slice(20),
  ];
  const out = await computeVisualFeatures(batch, { threads: 2 });
  for (const key of ['missing', 'corrupt', 'truncated', 'text', 'video-missing-frame', 'empty']) {
    const r = out.get(key)!;
    assert.is(r.vector, null, key);
    assert.is(r.elements, null, key);
    assert.type(r.error, 'string', key);
    assert.ok(r.error!.length > 0);
  }
  assert.ok(out.get('missing')!.error!.includes(missing));
  assert.ok(out.get('corrupt')!.error!.includes(corrupt));
  assert.ok(out.get('text')!.error!.includes(text));
  assert.ok(out.get('video-missing-frame')!.error!.includes(missing));
  assert.not.match(out.get('corrupt')!.error!, /\n/);
  for (const it of rest) {
    const r = out.get(it.key)!;
    assert.is(r.error, undefined);
    assert.equal(Buffer.from(r.vector!.buffer), Buffer.from(results.get(it.key)!.vector!.buffer));
  }
});

test('a worker that dies fails only the item that killed it; a fresh worker finishes the rest', async () => {
  const culprit = path.join(tmpDir('visual-'), 'kills-the-worker.jpg');
  const rest = items.slice(0, 60);
  process.env.VISUAL_WORKER_CRASH_PATH = culprit;
  try {
    const out = await computeVisualFeatures(
      [...rest.slice(0, 25), { key: 'culprit', kind: 'image', paths: [culprit] }, ...rest.slice(25)],
      { threads: 2 },
    );
    assert.match(out.get('culprit')!.error ?? '', /visual worker failed: worker exited with code 70/);
    for (const it of rest)
      assert.equal(Buffer.from(out.get(it.key)!.vector!.buffer), Buffer.from(results.get(it.key)!.vector!.buffer), it.key);
  } finally {
    delete process.env.VISUAL_WORKER_CRASH_PATH;
  }
});

test("a carousel averages its pictures: the same picture twice gives that picture's vector", async () => {
  const img = items.find((i) => i.kind === 'image')!;
  const out = await computeVisualFeatures([{ key: 'twice', kind: 'carousel', paths: [img.paths[0]!, img.paths[0]!] }], { threads: 1 });
  assert.equal(Buffer.from(out.get('twice')!.vector!.buffer), Buffer.from(results.get(img.key)!.vector!.buffer));
  assert.equal(out.get('twice')!.elements, results.get(img.key)!.elements);
  assert.equal(await computeVisualFeatures([]), new Map());
});

test('the docs describe this version: every block, its size and the total dimension', () => {
  const doc = fs.readFileSync(path.join(ROOT, 'docs', 'visual-features.md'), 'utf8');
  assert.ok(doc.includes(VISUAL_FEATURES_VERSION), 'version');
  assert.ok(doc.includes(`${VISUAL_DIM}`), 'dimension');
  for (const b of VISUAL_BLOCKS)
    assert.ok(new RegExp(`\\b${b.name}\\b[^\\n]*\\|\\s*${b.size}\\s*\\|`).test(doc), `block ${b.name} ${b.size}`);
  for (const w of [...COLOR_NAMES, ...STYLE_VOCABULARY, ...LAYOUT_VOCABULARY, ...MOTION_VOCABULARY]) assert.ok(doc.includes(`\`${w}\``), w);
});

test.run();
