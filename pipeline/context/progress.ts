// Progress of long stages: a bar on a TTY (cli-progress), periodic JSON count lines otherwise, so
// a scheduled run's log still says how far it got.
import cliProgress from 'cli-progress';
import type { Logger } from '../../core/infra/log.ts';

export interface Progress {
  update(done: number): void;
  stop(): void;
}

export function createProgress(log: Logger, label: string, total: number, opts: { tty?: boolean; everyMs?: number } = {}): Progress {
  const tty = opts.tty ?? Boolean(process.stderr.isTTY);
  if (tty) {
    const bar = new cliProgress.SingleBar(
      { format: `${label.padEnd(12)} [{bar}] {percentage}% {value}/{total} eta {eta}s`, stream: process.stderr, hideCursor: true },
      cliProgress.Presets.shades_classic,
    );
    bar.start(total, 0);
    return { update: (d) => bar.update(d), stop: () => bar.stop() };
  }
  const everyMs = opts.everyMs ?? 5000;
  let last = Date.now();
  return {
    update(done) {
      const now = Date.now();
      if (now - last >= everyMs) {
        last = now;
        log.info({ progress: label, done, total }, 'progress');
      }
    },
    stop() {},
  };
}

/**
 * While a long DuckDB statement runs, feed its own progress estimate (0..100) to `onPercent`.
 * DuckDB tracks progress only with its progress bar enabled; we enable it without its printing.
 */
export async function withQueryProgress<T>(
  conn: { progress: { percentage: number } },
  onPercent: (pct: number) => void,
  work: () => Promise<T>,
  everyMs = 500,
): Promise<T> {
  const timer = setInterval(() => {
    const pct = conn.progress.percentage;
    if (pct >= 0) onPercent(Math.min(100, pct));
  }, everyMs);
  try {
    return await work();
  } finally {
    clearInterval(timer);
  }
}
