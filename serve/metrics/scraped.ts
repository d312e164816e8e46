// Metrics whose figure lives elsewhere and is read when Prometheus scrapes: nothing is done on
// the paths that change it.
import { Counter, Gauge, type Registry } from 'prom-client';

/** A gauge read at each scrape; no sample while `value` is null (nothing served, no run yet). */
export function scrapedGauge(registry: Registry, name: string, help: string, value: () => number | null | Promise<number | null>): void {
  new Gauge({
    name,
    help,
    registers: [registry],
    async collect() {
      const v = await value();
      if (v === null) this.reset();
      else this.set(v);
    },
  });
}

/** A counter kept elsewhere (a count since the process started), copied at each scrape. */
export function mirroredCounter(registry: Registry, name: string, help: string, value: () => number): void {
  new Counter({
    name,
    help,
    registers: [registry],
    collect() {
      this.reset();
      this.inc(value());
    },
  });
}
