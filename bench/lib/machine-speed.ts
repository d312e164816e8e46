// A fixed probe of the machine's speed, timed beside a benchmark so runs made at different times
// can be compared: on this VM the same code's HTTP throughput moved by tens of percent within an
// hour. Two figures, because the server's costs are of both kinds: a dependent random walk over
// 256 MB (memory latency: the search's graph, postings and row reads) and a float dot-product
// loop over 1 MB (arithmetic in cache). Medians of 5 repetitions.
interface MachineSpeed {
  memoryNsPerAccess: number;
  computeNsPerMultiplyAdd: number;
}

const WALK_BYTES = 256 << 20;
const WALK_STEPS = 2_000_000;

let walk: Int32Array | null = null;

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[s.length >> 1]!;
}

/** A single random cycle through every slot (Sattolo's shuffle), so each step depends on the last. */
function cycle(n: number): Int32Array {
  const next = new Int32Array(n);
  for (let i = 0; i < n; i++) next[i] = i;
  let seed = 12345;
  for (let i = n - 1; i > 0; i--) {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
    const j = seed % i;
    const t = next[i]!;
    next[i] = next[j]!;
    next[j] = t;
  }
  return next;
}

export function machineSpeed(): MachineSpeed {
  walk ??= cycle(WALK_BYTES / 4);
  const mem: number[] = [];
  const cpu: number[] = [];
  const a = new Float32Array(1 << 18).map((_, i) => Math.sin(i));
  const b = new Float32Array(1 << 18).map((_, i) => Math.cos(i));
  let sink = 0;
  for (let rep = 0; rep < 5; rep++) {
    let p = 0;
    const t0 = performance.now();
    for (let s = 0; s < WALK_STEPS; s++) p = walk[p]!;
    mem.push(((performance.now() - t0) * 1e6) / WALK_STEPS);
    sink += p;
    const rounds = 40;
    const t1 = performance.now();
    for (let r = 0; r < rounds; r++) {
      let s0 = 0;
      let s1 = 0;
      for (let i = 0; i < a.length; i += 2) {
        s0 += a[i]! * b[i]!;
        s1 += a[i + 1]! * b[i + 1]!;
      }
      sink += s0 + s1;
    }
    cpu.push(((performance.now() - t1) * 1e6) / (rounds * a.length));
  }
  if (sink === 0.5) process.stdout.write(''); // keeps the loops' results alive
  return { memoryNsPerAccess: median(mem), computeNsPerMultiplyAdd: median(cpu) };
}
