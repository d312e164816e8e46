// `npm run bench -- first-start [--runs R] [--busy]`: a new user's first start, as the design's bar
// has it (serving in under 3 minutes on a fresh clone, install excluded). Each run clones the
// committed HEAD into a temporary directory, installs it from the lockfile (timed apart), then
// times `npm start` on an empty data directory until it prints its next-step block, and reads the
// phases off its JSON log. --busy keeps one core of the two busy with a spinning process (a busy
// loop) during the starts, as one other job on the machine would: the start then has one core (the
// figures of a "busy 2-core machine"). Any other load is not controlled: the load average at the
// start of the runs is recorded beside the figures, since a machine loaded further starts slower.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { machine, median, writeResultsJson, writeResultsSection } from '../results-file.ts';

interface FirstStartOptions {
  runs: number;
  busy: boolean;
  command: string;
}

const ROOT = path.resolve(import.meta.dirname, '..', '..');
const BAR_S = 180;

interface Run {
  installS: number;
  servingS: number;
  cpuS: number;
  corpusS: number;
  stagesS: Record<string, number>;
  loadS: number;
  records: number;
  mediaFiles: number;
  posts: number;
}

/**
 * CPU seconds used so far by process `pid` and its descendants (their threads, and the children they
 * waited for), from /proc (Linux; NaN elsewhere): what the start takes on one core it has to itself,
 * whatever else the machine runs.
 */
function treeCpuS(pid: number): number {
  try {
    const tick = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    const stats = new Map<number, { ppid: number; ticks: number }>();
    for (const e of fs.readdirSync('/proc')) {
      if (!/^\d+$/.test(e)) continue;
      try {
        // Fields after "(comm)": state ppid ... utime (14th) stime cutime cstime.
        const f = fs.readFileSync(`/proc/${e}/stat`, 'utf8').split(') ')[1]!.split(' ');
        stats.set(Number(e), { ppid: Number(f[1]), ticks: Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14]) });
      } catch {
        // the process ended meanwhile
      }
    }
    let ticks = 0;
    for (const [p, st] of stats) {
      let q: number | undefined = p;
      while (q !== undefined && q > 1 && q !== pid) q = stats.get(q)?.ppid;
      if (q === pid) ticks += st.ticks;
    }
    return ticks / tick;
  } catch {
    return NaN;
  }
}

function spinner(): ChildProcess {
  return spawn(process.execPath, ['-e', 'for(;;){}'], { stdio: 'ignore' });
}

/** One fresh clone, installed, then npm start timed until the next-step block. */
async function oneRun(): Promise<Run> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'first-start-'));
  try {
    execFileSync('git', ['clone', '-q', ROOT, dir]);
    const i0 = performance.now();
    execFileSync('npm', ['ci', '--no-audit', '--no-fund', '--silent'], { cwd: dir, stdio: 'ignore' });
    const installS = (performance.now() - i0) / 1000;
    const t0 = performance.now();
    const child = spawn('npm', ['start'], {
      cwd: dir,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, DATA_DIR: path.join(dir, 'data'), PORT: '0', PIPELINE_SCHEDULE: '{"run":"0 0 1 1 *"}' },
    });
    let out = '';
    child.stdout!.on('data', (d) => (out += d));
    child.stderr!.on('data', (d) => (out += d));
    await new Promise<void>((resolve, reject) => {
      const timer = setInterval(() => {
        if (/\n {2}stop: /.test(out)) (clearInterval(timer), resolve());
        else if (child.exitCode !== null) (clearInterval(timer), reject(new Error(`npm start exited: ${out.slice(-2000)}`)));
      }, 100);
    });
    const servingS = (performance.now() - t0) / 1000;
    const cpuS = treeCpuS(child.pid!);
    process.kill(-child.pid!, 'SIGTERM');
    await new Promise((r) => child.once('close', r));
    const lines = out
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    const corpus = lines.find((l) => l.msg === 'fixture corpus generated')!;
    const stagesS = Object.fromEntries(
      lines.filter((l) => l.msg === 'stage finished').map((l) => [l.stage as string, (l.ms as number) / 1000]),
    );
    const load = lines.find((l) => l.msg === 'serving generation');
    const publish = lines.find((l) => l.msg === 'stage finished' && l.stage === 'publish');
    return {
      installS,
      servingS,
      cpuS,
      corpusS: (corpus.ms as number) / 1000,
      stagesS,
      loadS: ((load?.loadMs as number | undefined) ?? 0) / 1000,
      records: corpus.records as number,
      mediaFiles: corpus.mediaFiles as number,
      posts: (publish?.summary as { counts?: { posts?: number } } | undefined)?.counts?.posts ?? 0,
    };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

export async function benchFirstStart(o: FirstStartOptions): Promise<void> {
  const head = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).trim();
  const dirty = execFileSync('git', ['status', '--porcelain'], { cwd: ROOT, encoding: 'utf8' }).trim() !== '';
  const runs: Run[] = [];
  const load = os.loadavg()[0]!;
  const spin = o.busy ? spinner() : null;
  try {
    for (let r = 0; r < o.runs; r++) {
      const run = await oneRun();
      runs.push(run);
      process.stdout.write(
        `run ${r + 1}: serving after ${run.servingS.toFixed(1)} s, ${run.cpuS.toFixed(1)} s CPU (install ${run.installS.toFixed(1)} s)\n`,
      );
    }
  } finally {
    spin?.kill('SIGKILL');
  }
  const med = (f: (r: Run) => number) => median(runs.map(f));
  const stageNames = Object.keys(runs[0]!.stagesS);
  const serving = med((r) => r.servingS);
  const md = `## \`npm start\` on a fresh clone${o.busy ? ', one core kept busy' : ''}

Command: \`${o.command}\` — ${new Date().toISOString().slice(0, 10)}, ${machine()}, commit ${head}${dirty ? ' (with uncommitted changes: the clone has only the commit)' : ''}; ${o.runs} run(s), each a fresh \`git clone\` and \`npm ci\` (not counted), then \`npm start\` on an empty data directory timed until it prints its next-step block${o.busy ? '; a process spinning on one of the two cores throughout' : ''}; load average ${load.toFixed(2)} before the runs (other work on the machine is not controlled).

| | ${runs.map((_, i) => `run ${i + 1}`).join(' | ')} | median |
|---|${runs.map(() => '---|').join('')}---|
| **serving after** (bar ${BAR_S} s) | ${runs.map((r) => `${r.servingS.toFixed(1)} s`).join(' | ')} | **${serving.toFixed(1)} s** (${serving < BAR_S ? 'met' : 'missed'}) |
| CPU time of the start (all its processes and threads: the time on one free core) | ${runs.map((r) => `${r.cpuS.toFixed(1)} s`).join(' | ')} | ${med((r) => r.cpuS).toFixed(1)} s |
| corpus generated (${runs[0]!.records.toLocaleString('en-US')} records, ${runs[0]!.mediaFiles.toLocaleString('en-US')} media files) | ${runs.map((r) => `${r.corpusS.toFixed(1)} s`).join(' | ')} | ${med((r) => r.corpusS).toFixed(1)} s |
${stageNames.map((s) => `| ${s} | ${runs.map((r) => `${(r.stagesS[s] ?? 0).toFixed(1)} s`).join(' | ')} | ${med((r) => r.stagesS[s] ?? 0).toFixed(1)} s |`).join('\n')}
| server: generation loaded | ${runs.map((r) => `${r.loadS.toFixed(1)} s`).join(' | ')} | ${med((r) => r.loadS).toFixed(1)} s |
| install (\`npm ci\`, not counted) | ${runs.map((r) => `${r.installS.toFixed(1)} s`).join(' | ')} | ${med((r) => r.installS).toFixed(1)} s |

Posts published: ${runs[0]!.posts.toLocaleString('en-US')}. The rest of "serving after" is process start-up, the demo account, the ledger and the server's listen.`;
  process.stdout.write(md + '\n');
  writeResultsJson(o.busy ? 'start-busy' : 'start', { command: o.command, machine: machine(), commit: head, loadAverage: load, runs });
  writeResultsSection(o.busy ? 'start-busy' : 'start', md);
}
