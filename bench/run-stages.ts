// Child process of the pipeline benchmark: runs the given stages in-process on a data dir and
// prints one JSON line with wall time, per-stage timings and peak RSS (the whole process,
// DuckDB's native memory included).
import { loadConfig } from '../core/infra/config.ts';
import { createLogger } from '../core/infra/log.ts';
import { resolveStages, runStages } from '../pipeline/run/runner.ts';

const [dataDir, asOf, ...rest] = process.argv.slice(2);
const full = rest.includes('--full');
const stages = rest.filter((s) => s !== '--full');
if (!dataDir || !asOf || stages.length === 0) {
  process.stderr.write('usage: run-stages.ts DATA_DIR AS_OF [--full] STAGE...\n');
  process.exit(2);
}
const config = loadConfig({ ...process.env, DATA_DIR: dataDir, LOG_LEVEL: 'silent' });
const t0 = performance.now();
const r = await runStages(resolveStages(stages), { config, log: createLogger('bench', 'silent'), asOf: new Date(asOf), tty: false, full });
const ms = performance.now() - t0;
const stageMs = Object.fromEntries(r.stages.map((s) => [s.stage, s.ms]));
const summaries = Object.fromEntries(
  r.stages.map((s) => {
    const { perFile: _p, ...rest } = s.summary as Record<string, unknown>;
    return [s.stage, rest];
  }),
);
process.stdout.write(JSON.stringify({ ms, stageMs, summaries, maxRssMiB: process.resourceUsage().maxRSS / 1024 }) + '\n');
