// The numbers behind the visual features: from a decoded 64x64 RGB thumbnail to per-frame
// features, from an item's frames (one image, a carousel's images, a video's frames) to its
// vector and its nameable elements. Pure functions over typed arrays, no I/O: the worker decodes
// with sharp and calls these; tests can call them directly. Every loop runs in a fixed order over
// Float64 values, so the same pixels give the same vector to the bit on any worker.
//
// Vector layout (VISUAL_DIM = 160), blocks in this order:
//   A colour histogram   52  12 hues x 2 saturations x 2 values (soft over hue) + 4 grey levels;
//                            Hellinger (sqrt of pixel shares), unit norm, weight 1.0
//   B colour layout      48  4x4 grid of mean colours as (Y - 0.5, 2 Cb, 2 Cr); unit norm, weight 1.0
//   C edge orientation   32  2x2 quadrants x 8 gradient orientations over [0, pi), weighted by
//                            gradient magnitude above a noise floor; sqrt, unit norm, weight 0.8
//   D tone statistics    11  brightness, contrast, saturation, colourfulness, edge density, shares;
//                            each centred and scaled to [-1, 1], block norm <= weight 0.6
//   E motion             17  videos: 4x4 grid + overall mean absolute luma difference between
//                            consecutive frames, squashed m/(m + 0.05); block norm <= weight 0.5;
//                            zero for stills and carousels
// The concatenation is L2-normalised (float32). Cosine of two vectors is then a weighted blend of
// the per-block similarities. docs/visual-features.md is the reference.
import {
  buildColorNameLut,
  COLOR_NAMES,
  RULES,
  type AestheticStyle,
  type ColorName,
  type LayoutName,
  type MotionName,
} from './visual-palette.ts';

export const VISUAL_FEATURES_VERSION = 'visual-1.0.0';

/** sharp's output size (fit: fill); the features are computed on its 2x2 box average. */
export const DECODE_SIZE = 64;
const THUMB = 32;
const NPIX = THUMB * THUMB;

const HUE_BINS = 12;
const HIST_DIM = HUE_BINS * 2 * 2 + 4;
const GRID = 4;
const LAYOUT_DIM = GRID * GRID * 3;
const ORIENTATIONS = 8;
const EDGE_DIM = 4 * ORIENTATIONS;
const STAT_NAMES = [
  'lumaMean',
  'lumaStd',
  'satMean',
  'satStd',
  'colourfulness',
  'edgeDensity',
  'darkShare',
  'brightShare',
  'warmShare',
  'coolShare',
  'chromaticShare',
] as const;
/** Centre and half-range of each statistic in block D: value -> clip((x - centre) / range, -1, 1). */
const STAT_CENTRE = [0.5, 0.2, 0.35, 0.2, 0.2, 0.2, 0.2, 0.2, 0.2, 0.2, 0.5];
const STAT_RANGE = [0.5, 0.2, 0.35, 0.2, 0.2, 0.2, 0.2, 0.2, 0.2, 0.2, 0.5];
const STAT_DIM = STAT_NAMES.length;
const MOTION_GRID = 4;
const MOTION_DIM = MOTION_GRID * MOTION_GRID + 1;
const MOTION_SIZE = 16;
const MOTION_REF = 0.05;
const MASS_GRID = 8;

/** Chromatic pixel: saturation and value both at least this (else it counts as a grey level). */
const CHROMA_MIN_S = 0.2;
const CHROMA_MIN_V = 0.2;
/** Sobel magnitude (luma units per pixel) that counts as an edge pixel, and the noise floor subtracted from the weight. */
const EDGE_PIXEL = 0.04;
const EDGE_NOISE = 0.015;
/** Distance (RGB, scaled to [0, 1]) from the border's mean colour that makes a pixel salient. */
const SALIENT = 0.12;

interface VisualBlock {
  name: string;
  offset: number;
  size: number;
  weight: number;
  normalised: 'unit' | 'bounded';
}

export const VISUAL_BLOCKS: readonly VisualBlock[] = (() => {
  const spec: Array<[string, number, number, 'unit' | 'bounded']> = [
    ['colourHistogram', HIST_DIM, 1.0, 'unit'],
    ['colourLayout', LAYOUT_DIM, 1.0, 'unit'],
    ['edgeOrientation', EDGE_DIM, 0.8, 'unit'],
    ['toneStatistics', STAT_DIM, 0.6, 'bounded'],
    ['motion', MOTION_DIM, 0.5, 'bounded'],
  ];
  let offset = 0;
  return spec.map(([name, size, weight, normalised]) => {
    const b = { name, offset, size, weight, normalised };
    offset += size;
    return b;
  });
})();

export const VISUAL_DIM = VISUAL_BLOCKS.reduce((a, b) => a + b.size, 0);

/** One decoded picture's features. Shares and means, so frames can be averaged. */
export interface FrameFeatures {
  hist: Float64Array;
  grid: Float64Array;
  edges: Float64Array;
  stats: Float64Array;
  /** Share of pixels per colour name (COLOR_NAMES order). */
  names: Float64Array;
  /** 8x8 grid: share of salient pixels per cell. */
  mass: Float64Array;
  /** 16x16 luma, for motion between frames. */
  luma16: Float64Array;
}

export interface VisualElements {
  dominantColors: ColorName[];
  aestheticStyle: AestheticStyle[];
  layout: LayoutName;
  motion: MotionName | null;
}

let lut: Uint8Array | null = null;
// Working planes of the 32x32 image, reused: frameFeatures is synchronous and overwrites every entry.
const SCRATCH_R = new Float64Array(NPIX),
  SCRATCH_G = new Float64Array(NPIX),
  SCRATCH_B = new Float64Array(NPIX),
  SCRATCH_L = new Float64Array(NPIX);

// Per-pixel cell indices of the 32x32 working image: colour-layout cell (x3), salient-mass cell, motion cell.
const GRID_OF = new Int32Array(NPIX);
const MASS_OF = new Int32Array(NPIX);
const MOTION_OF = new Int32Array(NPIX);
for (let y = 0; y < THUMB; y++) {
  for (let x = 0; x < THUMB; x++) {
    const i = y * THUMB + x;
    GRID_OF[i] = (Math.floor((y * GRID) / THUMB) * GRID + Math.floor((x * GRID) / THUMB)) * 3;
    MASS_OF[i] = Math.floor((y * MASS_GRID) / THUMB) * MASS_GRID + Math.floor((x * MASS_GRID) / THUMB);
    MOTION_OF[i] = Math.floor((y * MOTION_SIZE) / THUMB) * MOTION_SIZE + Math.floor((x * MOTION_SIZE) / THUMB);
  }
}

/**
 * Features of one picture from sharp's raw output (DECODE_SIZE x DECODE_SIZE, 1-4 channels;
 * 1-2 channels are grey, a 4th channel is ignored: the worker flattens alpha first). Each block
 * is its own pass over the 32x32 planes; every pass visits the pixels in row order, so each sum
 * adds the same values in the same order whichever pass holds it.
 */
export function frameFeatures(data: Uint8Array, width: number, height: number, channels: number): FrameFeatures {
  if (width !== DECODE_SIZE || height !== DECODE_SIZE) throw new Error(`expected ${DECODE_SIZE}x${DECODE_SIZE}, got ${width}x${height}`);
  if (channels < 1 || channels > 4) throw new Error(`unsupported channel count ${channels}`);
  if (data.length < width * height * channels) throw new Error('short pixel buffer');
  boxAverage(data, width, channels);
  // toneSums fills SCRATCH_L, which the passes after it read.
  const tone = toneSums();
  const { edges, edgePixels } = edgeOrientation();
  return {
    hist: colourHistogram(),
    grid: colourLayout(),
    edges,
    stats: toneStatistics(tone, edgePixels),
    names: colourNames(),
    mass: salientMass(),
    luma16: luma16Of(),
  };
}

/** The 2x2 box average of the decoded picture into the working planes SCRATCH_R, _G, _B (values in [0, 1]). */
function boxAverage(data: Uint8Array, width: number, channels: number): void {
  const f = DECODE_SIZE / THUMB;
  const scale = 1 / (f * f * 255);
  const grey = channels < 3;
  for (let y = 0; y < THUMB; y++) {
    for (let x = 0; x < THUMB; x++) {
      let r = 0,
        g = 0,
        b = 0;
      for (let dy = 0; dy < f; dy++) {
        for (let dx = 0; dx < f; dx++) {
          const o = ((y * f + dy) * width + (x * f + dx)) * channels;
          const v0 = data[o]!;
          r += v0;
          g += grey ? v0 : data[o + 1]!;
          b += grey ? v0 : data[o + 2]!;
        }
      }
      const i = y * THUMB + x;
      SCRATCH_R[i] = r * scale;
      SCRATCH_G[i] = g * scale;
      SCRATCH_B[i] = b * scale;
    }
  }
}

const max3 = (r: number, g: number, b: number) => (r > g ? (r > b ? r : b) : g > b ? g : b);
const min3 = (r: number, g: number, b: number) => (r < g ? (r < b ? r : b) : g < b ? g : b);
const saturation = (max: number, min: number) => (max > 0 ? (max - min) / max : 0);
const isChromatic = (s: number, v: number) => s >= CHROMA_MIN_S && v >= CHROMA_MIN_V;

/** Hue in degrees, [0, 360), of a chromatic pixel. */
function hueOf(r: number, g: number, b: number, max: number, min: number): number {
  const d = max - min;
  let h = max === r ? (g - b) / d : max === g ? 2 + (b - r) / d : 4 + (r - g) / d;
  h *= 60;
  if (h < 0) h += 360;
  return h;
}

/** The sums and counts block D's statistics take their means and deviations of. */
interface ToneSums {
  lumaSum: number;
  lumaSq: number;
  satSum: number;
  satSq: number;
  rgSum: number;
  rgSq: number;
  ybSum: number;
  ybSq: number;
  dark: number;
  bright: number;
  warm: number;
  cool: number;
  chroma: number;
}

/** Every pixel's luma into SCRATCH_L, and the tone sums. */
function toneSums(): ToneSums {
  const t: ToneSums = {
    lumaSum: 0,
    lumaSq: 0,
    satSum: 0,
    satSq: 0,
    rgSum: 0,
    rgSq: 0,
    ybSum: 0,
    ybSq: 0,
    dark: 0,
    bright: 0,
    warm: 0,
    cool: 0,
    chroma: 0,
  };
  for (let i = 0; i < NPIX; i++) {
    const r = SCRATCH_R[i]!,
      g = SCRATCH_G[i]!,
      b = SCRATCH_B[i]!;
    const luma = 0.299 * r + 0.587 * g + 0.114 * b;
    SCRATCH_L[i] = luma;
    const max = max3(r, g, b),
      min = min3(r, g, b);
    const s = saturation(max, min);
    t.lumaSum += luma;
    t.lumaSq += luma * luma;
    t.satSum += s;
    t.satSq += s * s;
    if (luma < 0.2) t.dark++;
    if (luma > 0.8) t.bright++;
    const rg = r - g,
      yb = 0.5 * (r + g) - b;
    t.rgSum += rg;
    t.rgSq += rg * rg;
    t.ybSum += yb;
    t.ybSq += yb * yb;
    if (!isChromatic(s, max)) continue;
    t.chroma++;
    const h = hueOf(r, g, b, max, min);
    if (h < 75 || h >= 330) t.warm++;
    else if (h >= 150 && h < 270) t.cool++;
  }
  return t;
}

/** Block A before weighting: pixel shares per hue (soft between neighbouring bins) x saturation x value, then grey levels. */
function colourHistogram(): Float64Array {
  const hist = new Float64Array(HIST_DIM);
  for (let i = 0; i < NPIX; i++) {
    const r = SCRATCH_R[i]!,
      g = SCRATCH_G[i]!,
      b = SCRATCH_B[i]!;
    const max = max3(r, g, b),
      min = min3(r, g, b);
    const s = saturation(max, min),
      v = max;
    if (!isChromatic(s, v)) {
      hist[HUE_BINS * 4 + Math.min(3, Math.floor(v * 4))]! += 1;
      continue;
    }
    const h = hueOf(r, g, b, max, min);
    const sb = s < 0.55 ? 0 : 1,
      vb = v < 0.6 ? 0 : 1;
    const t = h / (360 / HUE_BINS) - 0.5;
    const k0 = Math.floor(t);
    const frac = t - k0;
    const h0 = (k0 + HUE_BINS) % HUE_BINS,
      h1 = (k0 + 1) % HUE_BINS;
    hist[(h0 * 2 + sb) * 2 + vb]! += 1 - frac;
    hist[(h1 * 2 + sb) * 2 + vb]! += frac;
  }
  for (let k = 0; k < hist.length; k++) hist[k]! /= NPIX;
  return hist;
}

/** Block B before weighting: the mean (Y - 0.5, 2 Cb, 2 Cr) of each cell of the 4x4 grid. */
function colourLayout(): Float64Array {
  const grid = new Float64Array(LAYOUT_DIM);
  for (let i = 0; i < NPIX; i++) {
    const r = SCRATCH_R[i]!,
      g = SCRATCH_G[i]!,
      b = SCRATCH_B[i]!;
    const gi = GRID_OF[i]!;
    grid[gi]! += SCRATCH_L[i]! - 0.5;
    grid[gi + 1]! += 2 * (-0.168736 * r - 0.331264 * g + 0.5 * b);
    grid[gi + 2]! += 2 * (0.5 * r - 0.418688 * g - 0.081312 * b);
  }
  const cell = THUMB / GRID;
  for (let k = 0; k < grid.length; k++) grid[k]! /= cell * cell;
  return grid;
}

/** Share of pixels per colour name (COLOR_NAMES order), through the 15-bit RGB lookup table. */
function colourNames(): Float64Array {
  lut ??= buildColorNameLut();
  const names = new Float64Array(COLOR_NAMES.length);
  for (let i = 0; i < NPIX; i++) {
    const q =
      (Math.min(31, Math.round(SCRATCH_R[i]! * 255) >> 3) << 10) |
      (Math.min(31, Math.round(SCRATCH_G[i]! * 255) >> 3) << 5) |
      Math.min(31, Math.round(SCRATCH_B[i]! * 255) >> 3);
    names[lut[q]!]! += 1;
  }
  for (let k = 0; k < names.length; k++) names[k]! /= NPIX;
  return names;
}

/** Salient mass: per cell of the 8x8 grid, the share of pixels far from the border's mean colour (the background, for framed content). */
function salientMass(): Float64Array {
  let br = 0,
    bg = 0,
    bb = 0,
    bn = 0;
  for (let y = 0; y < THUMB; y++) {
    for (let x = 0; x < THUMB; x++) {
      if (x !== 0 && y !== 0 && x !== THUMB - 1 && y !== THUMB - 1) continue;
      const i = y * THUMB + x;
      br += SCRATCH_R[i]!;
      bg += SCRATCH_G[i]!;
      bb += SCRATCH_B[i]!;
      bn++;
    }
  }
  br /= bn;
  bg /= bn;
  bb /= bn;
  const mass = new Float64Array(MASS_GRID * MASS_GRID);
  const salient2 = SALIENT * SALIENT * 3;
  for (let i = 0; i < NPIX; i++) {
    const dr = SCRATCH_R[i]! - br,
      dg = SCRATCH_G[i]! - bg,
      db = SCRATCH_B[i]! - bb;
    if (dr * dr + dg * dg + db * db > salient2) mass[MASS_OF[i]!]! += 1;
  }
  const mcell = THUMB / MASS_GRID;
  for (let k = 0; k < mass.length; k++) mass[k]! /= mcell * mcell;
  return mass;
}

/** The 16x16 mean luma, for motion between frames. */
function luma16Of(): Float64Array {
  const luma16 = new Float64Array(MOTION_SIZE * MOTION_SIZE);
  for (let i = 0; i < NPIX; i++) luma16[MOTION_OF[i]!]! += SCRATCH_L[i]!;
  const perMotionCell = (THUMB / MOTION_SIZE) ** 2;
  for (let k = 0; k < luma16.length; k++) luma16[k]! /= perMotionCell;
  return luma16;
}

/** Block C before weighting: Sobel on luma (interior pixels), orientation folded to [0, pi), per quadrant; and the edge pixels' count. */
function edgeOrientation(): { edges: Float64Array; edgePixels: number } {
  const L = SCRATCH_L;
  const edges = new Float64Array(EDGE_DIM);
  let edgePixels = 0;
  const half = THUMB / 2;
  const binWidth = Math.PI / ORIENTATIONS;
  for (let y = 1; y < THUMB - 1; y++) {
    for (let x = 1; x < THUMB - 1; x++) {
      const i = y * THUMB + x;
      const a = L[i - THUMB - 1]!,
        b = L[i - THUMB]!,
        c = L[i - THUMB + 1]!;
      const d = L[i - 1]!,
        e = L[i + 1]!;
      const f6 = L[i + THUMB - 1]!,
        g7 = L[i + THUMB]!,
        h8 = L[i + THUMB + 1]!;
      const gx = (c + 2 * e + h8 - a - 2 * d - f6) / 8;
      const gy = (f6 + 2 * g7 + h8 - a - 2 * b - c) / 8;
      const m = Math.sqrt(gx * gx + gy * gy);
      if (m > EDGE_PIXEL) edgePixels++;
      const w = m - EDGE_NOISE;
      if (w <= 0) continue;
      let theta = Math.atan2(gy, gx);
      if (theta < 0) theta += Math.PI;
      if (theta >= Math.PI) theta -= Math.PI;
      const t = theta / binWidth - 0.5;
      const k0 = Math.floor(t);
      const frac = t - k0;
      const region = ((y < half ? 0 : 1) * 2 + (x < half ? 0 : 1)) * ORIENTATIONS;
      edges[region + ((k0 + ORIENTATIONS) % ORIENTATIONS)]! += (w * (1 - frac)) / NPIX;
      edges[region + ((k0 + 1) % ORIENTATIONS)]! += (w * frac) / NPIX;
    }
  }
  return { edges, edgePixels };
}

/** Block D before scaling, in STAT_NAMES order. */
function toneStatistics(t: ToneSums, edgePixels: number): Float64Array {
  const mean = (s: number) => s / NPIX;
  const sd = (s: number, sq: number) => Math.sqrt(Math.max(0, sq / NPIX - (s / NPIX) ** 2));
  const stats = new Float64Array(STAT_DIM);
  stats[0] = mean(t.lumaSum);
  stats[1] = sd(t.lumaSum, t.lumaSq);
  stats[2] = mean(t.satSum);
  stats[3] = sd(t.satSum, t.satSq);
  stats[4] = Math.sqrt(sd(t.rgSum, t.rgSq) ** 2 + sd(t.ybSum, t.ybSq) ** 2) + 0.3 * Math.sqrt(mean(t.rgSum) ** 2 + mean(t.ybSum) ** 2);
  stats[5] = edgePixels / ((THUMB - 2) * (THUMB - 2));
  stats[6] = mean(t.dark);
  stats[7] = mean(t.bright);
  stats[8] = mean(t.warm);
  stats[9] = mean(t.cool);
  stats[10] = mean(t.chroma);
  return stats;
}

/** An item's aggregated features: per-frame features averaged, plus motion for videos. */
interface ItemFeatures extends Omit<FrameFeatures, 'luma16'> {
  /** Videos with two or more frames: 4x4 cells then overall; else null. */
  motion: Float64Array | null;
}

function average(arrays: Float64Array[]): Float64Array {
  const out = new Float64Array(arrays[0]!.length);
  for (const a of arrays) for (let k = 0; k < out.length; k++) out[k]! += a[k]!;
  for (let k = 0; k < out.length; k++) out[k]! /= arrays.length;
  return out;
}

/** Mean absolute luma difference between consecutive frames: 4x4 cells then overall, averaged over frame pairs. */
function motionFeatures(frames: FrameFeatures[]): Float64Array | null {
  if (frames.length < 2) return null;
  const out = new Float64Array(MOTION_DIM);
  const per = MOTION_SIZE / MOTION_GRID;
  for (let p = 1; p < frames.length; p++) {
    const a = frames[p - 1]!.luma16,
      b = frames[p]!.luma16;
    for (let y = 0; y < MOTION_SIZE; y++) {
      for (let x = 0; x < MOTION_SIZE; x++) {
        const i = y * MOTION_SIZE + x;
        const d = Math.abs(a[i]! - b[i]!);
        out[Math.floor(y / per) * MOTION_GRID + Math.floor(x / per)]! += d / (per * per);
        out[MOTION_DIM - 1]! += d / (MOTION_SIZE * MOTION_SIZE);
      }
    }
  }
  for (let k = 0; k < MOTION_DIM; k++) out[k]! /= frames.length - 1;
  return out;
}

export function itemFeatures(kind: 'image' | 'video' | 'carousel', frames: FrameFeatures[]): ItemFeatures {
  if (frames.length === 0) throw new Error('no frames');
  return {
    hist: average(frames.map((f) => f.hist)),
    grid: average(frames.map((f) => f.grid)),
    edges: average(frames.map((f) => f.edges)),
    stats: average(frames.map((f) => f.stats)),
    names: average(frames.map((f) => f.names)),
    mass: average(frames.map((f) => f.mass)),
    motion: kind === 'video' ? motionFeatures(frames) : null,
  };
}

function putUnit(out: Float64Array, offset: number, values: Float64Array, weight: number, sqrt: boolean): void {
  let n = 0;
  for (let k = 0; k < values.length; k++) {
    const v = sqrt ? Math.sqrt(Math.max(0, values[k]!)) : values[k]!;
    out[offset + k] = v;
    n += v * v;
  }
  if (n === 0) return;
  const s = weight / Math.sqrt(n);
  for (let k = 0; k < values.length; k++) out[offset + k]! *= s;
}

/** The L2-normalised float32 vector of an item (layout: VISUAL_BLOCKS). */
export function itemVector(f: ItemFeatures): Float32Array {
  const [A, Bk, C, D, E] = VISUAL_BLOCKS as [VisualBlock, VisualBlock, VisualBlock, VisualBlock, VisualBlock];
  const out = new Float64Array(VISUAL_DIM);
  putUnit(out, A.offset, f.hist, A.weight, true);
  putUnit(out, Bk.offset, f.grid, Bk.weight, false);
  putUnit(out, C.offset, f.edges, C.weight, true);
  const ds = D.weight / Math.sqrt(STAT_DIM);
  for (let k = 0; k < STAT_DIM; k++) {
    const z = (f.stats[k]! - STAT_CENTRE[k]!) / STAT_RANGE[k]!;
    out[D.offset + k] = ds * (z < -1 ? -1 : z > 1 ? 1 : z);
  }
  if (f.motion) {
    const es = E.weight / Math.sqrt(MOTION_DIM);
    for (let k = 0; k < MOTION_DIM; k++) {
      const m = f.motion[k]!;
      out[E.offset + k] = es * (m / (m + MOTION_REF));
    }
  }
  let n = 0;
  for (let k = 0; k < VISUAL_DIM; k++) n += out[k]! * out[k]!;
  const v = new Float32Array(VISUAL_DIM);
  const s = n > 0 ? 1 / Math.sqrt(n) : 0;
  for (let k = 0; k < VISUAL_DIM; k++) v[k] = out[k]! * s;
  return v;
}

/**
 * Layout name from the 8x8 salient-mass grid (thresholds in RULES.layout). spread = RMS distance
 * of the mass from its centroid (frame half-size = 1); dispersion = spread / sqrt(2 coverage / pi),
 * the spread of a single disc covering the same area, so one compact subject scores about 1 and
 * several separate ones well above.
 */
function layoutOf(mass: Float64Array): {
  layout: LayoutName;
  coverage: number;
  cx: number;
  cy: number;
  spread: number;
  dispersion: number;
} {
  const rules = RULES.layout;
  let total = 0,
    sx = 0,
    sy = 0;
  const pos = (i: number) => ((i + 0.5) / MASS_GRID) * 2 - 1;
  for (let y = 0; y < MASS_GRID; y++) {
    for (let x = 0; x < MASS_GRID; x++) {
      const m = mass[y * MASS_GRID + x]!;
      total += m;
      sx += m * pos(x);
      sy += m * pos(y);
    }
  }
  const coverage = total / (MASS_GRID * MASS_GRID);
  if (total === 0) return { layout: 'uniform', coverage, cx: 0, cy: 0, spread: 0, dispersion: 0 };
  const cx = sx / total,
    cy = sy / total;
  let ss = 0;
  for (let y = 0; y < MASS_GRID; y++) {
    for (let x = 0; x < MASS_GRID; x++) ss += mass[y * MASS_GRID + x]! * ((pos(x) - cx) ** 2 + (pos(y) - cy) ** 2);
  }
  const spread = Math.sqrt(ss / total);
  const dispersion = spread / Math.sqrt((2 * coverage) / Math.PI);
  let layout: LayoutName;
  if (coverage < rules.minCoverage || coverage >= rules.fullCoverage || spread >= rules.fullSpread) layout = 'uniform';
  else if (dispersion >= rules.scatteredDispersion) layout = 'scattered';
  else if (Math.abs(cx) < rules.centeredOffset && Math.abs(cy) < rules.centeredOffset) layout = 'centered';
  else if (Math.abs(cx) >= Math.abs(cy)) layout = cx < 0 ? 'left-heavy' : 'right-heavy';
  else layout = cy < 0 ? 'top-heavy' : 'bottom-heavy';
  return { layout, coverage, cx, cy, spread, dispersion };
}

export function motionOf(motion: Float64Array | null): MotionName | null {
  if (!motion) return null;
  const m = motion[MOTION_DIM - 1]!;
  return m < RULES.motion.staticBelow ? 'static' : m < RULES.motion.fastFrom ? 'slow' : 'fast';
}

function dominantColorsOf(names: Float64Array): ColorName[] {
  const order = COLOR_NAMES.map((_, k) => k).sort((a, b) => names[b]! - names[a]! || a - b);
  const out: ColorName[] = [];
  for (const k of order) {
    if (out.length >= RULES.dominantMax) break;
    if (out.length > 0 && names[k]! < RULES.dominantMinShare) break;
    out.push(COLOR_NAMES[k]!);
  }
  return out;
}

function stylesOf(stats: Float64Array): AestheticStyle[] {
  const at = (name: (typeof STAT_NAMES)[number]) => stats[STAT_NAMES.indexOf(name)]!;
  const luma = at('lumaMean'),
    lumaStd = at('lumaStd'),
    sat = at('satMean'),
    colourful = at('colourfulness');
  const edgeDensity = at('edgeDensity'),
    warm = at('warmShare'),
    cool = at('coolShare'),
    chromatic = at('chromaticShare');
  const r = RULES;
  const out: AestheticStyle[] = [];
  const monochrome = chromatic < r.monochrome.maxChromatic;
  const pastel = luma >= r.pastel.minLuma && sat >= r.pastel.minSatMean && sat <= r.pastel.maxSatMean && chromatic >= r.pastel.minChromatic;
  if (sat >= r.vibrant.minSatMean && colourful >= r.vibrant.minColourfulness) out.push('vibrant');
  if (!monochrome && !pastel && sat < r.muted.maxSatMean && colourful < r.muted.maxColourfulness && chromatic >= r.muted.minChromatic)
    out.push('muted');
  if (pastel) out.push('pastel');
  if (luma < r.dark.maxLuma) out.push('dark');
  if (luma > r.bright.minLuma) out.push('bright');
  if (lumaStd >= r.highContrast.minLumaStd) out.push('high-contrast');
  if (lumaStd < r.lowContrast.maxLumaStd) out.push('low-contrast');
  if (monochrome) out.push('monochrome');
  if (warm >= r.temperature.minShare && warm >= r.temperature.ratio * cool) out.push('warm');
  if (cool >= r.temperature.minShare && cool >= r.temperature.ratio * warm) out.push('cool');
  if (edgeDensity < r.minimal.maxEdgeDensity) out.push('minimal');
  if (edgeDensity >= r.busy.minEdgeDensity) out.push('busy');
  return out;
}

export function itemElements(f: ItemFeatures): VisualElements {
  return {
    dominantColors: dominantColorsOf(f.names),
    aestheticStyle: stylesOf(f.stats),
    layout: layoutOf(f.mass).layout,
    motion: motionOf(f.motion),
  };
}
