// The four time windows of the API (7d, 30d, 90d, all), anchored at a snapshot's as-of instant.
export const WINDOW_KEYS = ['7d', '30d', '90d', 'all'] as const;
export type WindowKey = (typeof WINDOW_KEYS)[number];

export const DAY_MS = 86_400_000;
export const WINDOW_DAYS: Record<Exclude<WindowKey, 'all'>, number> = { '7d': 7, '30d': 30, '90d': 90 };

export interface WindowBounds {
  start: string;
  end: string;
}

/** Bounds are [start, end] inclusive; `all` starts at the earliest post (or as-of when there is none). */
export function windowBounds(asOf: Date, earliest: Date | null): Record<WindowKey, WindowBounds> {
  const end = asOf.toISOString();
  const back = (days: number) => new Date(asOf.getTime() - days * DAY_MS).toISOString();
  return {
    '7d': { start: back(WINDOW_DAYS['7d']), end },
    '30d': { start: back(WINDOW_DAYS['30d']), end },
    '90d': { start: back(WINDOW_DAYS['90d']), end },
    all: { start: (earliest && earliest < asOf ? earliest : asOf).toISOString(), end },
  };
}
