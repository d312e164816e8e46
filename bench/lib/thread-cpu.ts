// CPU time of a process's threads, read from /proc/<pid>/task/<tid>/stat (utime + stime, in clock
// ticks of 10 ms on Linux), so a bench can say where a search's CPU went: the server's main thread,
// its search workers (their OS thread ids are in its log, core/infra/workers/os-thread.ts), and the rest
// (V8's garbage-collection helpers, libuv's pool, DuckDB's threads).
import fs from 'node:fs';

const TICK_MS = 10;

/** CPU milliseconds per thread id of the process. Threads that ended are missing. */
export function threadCpuMs(pid: number): Map<number, number> {
  const out = new Map<number, number>();
  for (const tid of fs.readdirSync(`/proc/${pid}/task`)) {
    try {
      const stat = fs.readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      // Fields after the command name (which may hold spaces), which ends at the last ')'.
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      out.set(Number(tid), (Number(f[11]) + Number(f[12])) * TICK_MS);
    } catch {
      // the thread ended between the listing and the read
    }
  }
  return out;
}

export interface CpuSplit {
  totalMs: number;
  mainMs: number;
  workersMs: number;
  otherMs: number;
}

/** The CPU spent between two readings, split into the main thread, the given worker threads and the rest. */
export function cpuBetween(before: Map<number, number>, after: Map<number, number>, main: number, workers: readonly number[]): CpuSplit {
  const split: CpuSplit = { totalMs: 0, mainMs: 0, workersMs: 0, otherMs: 0 };
  for (const [tid, ms] of after) {
    const d = ms - (before.get(tid) ?? 0);
    split.totalMs += d;
    if (tid === main) split.mainMs += d;
    else if (workers.includes(tid)) split.workersMs += d;
    else split.otherMs += d;
  }
  return split;
}
