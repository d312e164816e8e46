// bench/RESULTS.md holds one section per suite between markers, each with the command that
// produced it, so re-running one suite replaces only its own section.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const FILE = path.join(import.meta.dirname, 'RESULTS.md');
const HEADER = `# Benchmark results

Each section is written by \`npm run bench -- <suite>\` and names the command, the machine and the
date. Figures are medians over the runs stated; ratios compare against peers measured in the same run.
`;

export function writeResultsSection(suite: string, markdown: string): void {
  const start = `<!-- ${suite}:start -->`;
  const end = `<!-- ${suite}:end -->`;
  let text = fs.existsSync(FILE) ? fs.readFileSync(FILE, 'utf8') : HEADER;
  const block = `${start}\n${markdown.trim()}\n${end}`;
  const i = text.indexOf(start);
  const j = text.indexOf(end);
  text = i >= 0 && j > i ? text.slice(0, i) + block + text.slice(j + end.length) : `${text.trimEnd()}\n\n${block}\n`;
  fs.writeFileSync(FILE, text);
}

export function writeResultsJson(suite: string, data: unknown): string {
  const dir = path.join(import.meta.dirname, 'results');
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `${suite}.json`);
  fs.writeFileSync(file, JSON.stringify(data, null, 2) + '\n');
  return file;
}

export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

export function machine(): string {
  return `${os.cpus().length} cores, ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB, Node ${process.version}`;
}

/** A whole number with thousands separators, as the tables print them (1,234). */
export const thousands = (n: number) => Math.round(n).toLocaleString('en-US');

/** What every results JSON opens with: when, where, and the command that produced it. */
export const runStamp = (command: string) => ({ date: new Date().toISOString(), machine: machine(), command });
