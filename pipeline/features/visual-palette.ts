// Fixed vocabularies of the nameable visual elements (colour names, aesthetic styles, layouts,
// motion) and the lookup table that names a pixel's colour. Everything here is a constant: the
// element rules in visual-compute.ts read these thresholds, and docs/visual-features.md lists them.

/**
 * Named colours and their prototypes in sRGB: a pixel takes the name of the nearest prototype in
 * CIELAB. Several prototypes per name (light, typical, deep) keep a name's region from being
 * carved up by its neighbours (a pure blue is nearer a single mid purple than a single mid blue).
 */
export const COLOR_NAMES = [
  'black',
  'white',
  'gray',
  'red',
  'orange',
  'yellow',
  'green',
  'teal',
  'blue',
  'navy',
  'purple',
  'pink',
  'brown',
  'beige',
] as const;
export type ColorName = (typeof COLOR_NAMES)[number];

type Rgb = readonly [number, number, number];
const COLOR_PROTOTYPES: Readonly<Record<ColorName, readonly Rgb[]>> = {
  black: [
    [0, 0, 0],
    [25, 25, 25],
  ],
  white: [
    [255, 255, 255],
    [240, 240, 240],
  ],
  gray: [
    [80, 80, 80],
    [128, 128, 128],
    [180, 180, 180],
  ],
  red: [
    [255, 0, 0],
    [205, 35, 40],
    [140, 20, 25],
  ],
  orange: [
    [255, 165, 0],
    [245, 130, 40],
    [255, 120, 80],
  ],
  yellow: [
    [255, 255, 0],
    [245, 215, 45],
    [255, 240, 130],
  ],
  green: [
    [0, 128, 0],
    [55, 160, 65],
    [130, 210, 90],
    [25, 80, 35],
    [110, 120, 30],
  ],
  teal: [
    [0, 128, 128],
    [25, 160, 150],
    [100, 215, 205],
  ],
  blue: [
    [0, 0, 255],
    [45, 100, 225],
    [120, 170, 240],
    [20, 60, 170],
    [170, 210, 235],
  ],
  navy: [
    [0, 0, 128],
    [25, 35, 95],
    [20, 25, 55],
  ],
  purple: [
    [128, 0, 128],
    [125, 55, 175],
    [180, 140, 220],
    [70, 25, 100],
  ],
  pink: [
    [255, 190, 205],
    [240, 130, 185],
    [225, 50, 130],
    [255, 0, 255],
  ],
  brown: [
    [90, 50, 20],
    [125, 75, 35],
    [165, 105, 60],
  ],
  beige: [
    [225, 205, 165],
    [200, 175, 130],
    [245, 230, 200],
  ],
};

export const STYLE_VOCABULARY = [
  'vibrant',
  'muted',
  'pastel',
  'dark',
  'bright',
  'high-contrast',
  'low-contrast',
  'monochrome',
  'warm',
  'cool',
  'minimal',
  'busy',
] as const;
export type AestheticStyle = (typeof STYLE_VOCABULARY)[number];

export const LAYOUT_VOCABULARY = ['centered', 'left-heavy', 'right-heavy', 'top-heavy', 'bottom-heavy', 'scattered', 'uniform'] as const;
export type LayoutName = (typeof LAYOUT_VOCABULARY)[number];

export const MOTION_VOCABULARY = ['static', 'slow', 'fast'] as const;
export type MotionName = (typeof MOTION_VOCABULARY)[number];

/** Thresholds of the element rules (all on the [0, 1] scales of visual-compute.ts). */
export const RULES = {
  /** A colour name is listed after the first when it covers at least this share of the pixels. */
  dominantMinShare: 0.12,
  dominantMax: 3,
  vibrant: { minSatMean: 0.45, minColourfulness: 0.22 },
  pastel: { minLuma: 0.68, minSatMean: 0.1, maxSatMean: 0.4, minChromatic: 0.25 },
  muted: { maxSatMean: 0.25, maxColourfulness: 0.15, minChromatic: 0.05 },
  dark: { maxLuma: 0.3 },
  bright: { minLuma: 0.7 },
  highContrast: { minLumaStd: 0.3 },
  lowContrast: { maxLumaStd: 0.06 },
  monochrome: { maxChromatic: 0.05 },
  /** warm: warm share >= min and >= ratio x cool share (and the same the other way for cool). */
  temperature: { minShare: 0.25, ratio: 2 },
  minimal: { maxEdgeDensity: 0.06 },
  busy: { minEdgeDensity: 0.4 },
  layout: {
    /** Salient coverage below this: nothing stands out from the background, "uniform". */
    minCoverage: 0.02,
    /** Salient coverage at or above this: the content fills the frame, "uniform". */
    fullCoverage: 0.6,
    /** Spread (RMS distance of salient mass from its centroid; frame half-size = 1) at or above this: "uniform" (0.81 = evenly everywhere). */
    fullSpread: 0.7,
    /** Dispersion (spread / spread of one disc of the same area) at or above this: "scattered". */
    scatteredDispersion: 1.5,
    /** Centroid within this distance of the centre on both axes: "centered"; else the heavier side. */
    centeredOffset: 0.15,
  },
  /** Motion: mean absolute luma difference between consecutive frames (16x16). */
  motion: { staticBelow: 0.01, fastFrom: 0.05 },
} as const;

// ---- colour naming lookup ------------------------------------------------------------------

function srgbToLinear(c: number): number {
  return c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
}

/** CIELAB (D65) of an sRGB colour given as 0-255 integers. */
function srgbToLab(r: number, g: number, b: number): [number, number, number] {
  const R = srgbToLinear(r / 255),
    G = srgbToLinear(g / 255),
    B = srgbToLinear(b / 255);
  const x = (0.4124564 * R + 0.3575761 * G + 0.1804375 * B) / 0.95047;
  const y = 0.2126729 * R + 0.7151522 * G + 0.072175 * B;
  const z = (0.0193339 * R + 0.119192 * G + 0.9503041 * B) / 1.08883;
  const f = (t: number) => (t > 216 / 24389 ? Math.cbrt(t) : ((24389 / 27) * t + 16) / 116);
  const fx = f(x),
    fy = f(y),
    fz = f(z);
  return [116 * fy - 16, 500 * (fx - fy), 200 * (fy - fz)];
}

/** Colour-name index for each 5-bit-per-channel RGB cell (32^3 cells, index (r>>3)<<10 | (g>>3)<<5 | b>>3). */
export function buildColorNameLut(): Uint8Array {
  const refs: Array<[number, number, number, number]> = [];
  COLOR_NAMES.forEach((n, k) => {
    for (const c of COLOR_PROTOTYPES[n]) refs.push([...srgbToLab(c[0], c[1], c[2]), k]);
  });
  const lut = new Uint8Array(32 * 32 * 32);
  for (let r = 0; r < 32; r++) {
    for (let g = 0; g < 32; g++) {
      for (let b = 0; b < 32; b++) {
        const [L, A, B] = srgbToLab(r * 8 + 4, g * 8 + 4, b * 8 + 4);
        let best = 0,
          bestD = Infinity;
        for (let k = 0; k < refs.length; k++) {
          const ref = refs[k]!;
          const d = (L - ref[0]) ** 2 + (A - ref[1]) ** 2 + (B - ref[2]) ** 2;
          if (d < bestD) {
            bestD = d;
            best = ref[3];
          }
        }
        lut[(r << 10) | (g << 5) | b] = best;
      }
    }
  }
  return lut;
}
