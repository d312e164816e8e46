// What the formatter cannot see to: no line of the product or its tests over 160 characters
// (Prettier wraps code at 140 but leaves a long string whole; the bench suites' report templates
// and the fixture phrase lists are text, not code, and are left out), no function over 100 lines
// (a longer one does several jobs: name them), and no export that no other file uses. Prettier's own
// check runs in `npm run lint` (.ci/run).
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ROOT } from '../helpers/child.ts';
import { deadExports, longFunctions } from '../helpers/code-scan.ts';

const MAX = 160;

test(`no line over ${MAX} characters in the product's code and tests`, () => {
  const files = execFileSync('git', ['ls-files', '*.ts', '*.mjs', '*.cjs', 'ui/*.js'], { cwd: ROOT, encoding: 'utf8' })
    .split('\n')
    .filter((f) => f && !f.startsWith('bench/') && !f.startsWith('fixtures/'));
  assert.ok(files.length > 150, `${files.length} files`);
  const long: string[] = [];
  for (const f of files) {
    const lines = fs.readFileSync(path.join(ROOT, f), 'utf8').split('\n');
    lines.forEach((l, i) => {
      if (l.length > MAX) long.push(`${f}:${i + 1} (${l.length})`);
    });
  }
  assert.equal(long, []);
});

const sources = (patterns: string[]) =>
  execFileSync('git', ['ls-files', ...patterns], { cwd: ROOT, encoding: 'utf8' })
    .split('\n')
    .filter(Boolean);

const MAX_LINES = 100;

test(`no function over ${MAX_LINES} lines anywhere in the repository's code`, async () => {
  const files = sources(['*.ts', '*.mts', 'ui/*.js']);
  assert.ok(files.length > 300, `${files.length} files`);
  const long: string[] = [];
  for (const f of files) long.push(...(await longFunctions(f, fs.readFileSync(path.join(ROOT, f), 'utf8'), MAX_LINES)));
  assert.equal(long, []);
});

test('the function-length check finds a long function, arrow or nested', async () => {
  const body = Array.from({ length: 100 }, (_, i) => `  const v${i} = ${i};`).join('\n');
  const text = `export function short() {\n  return 1;\n}\nexport const outer = () => {\n  const inner = () => {\n${body}\n  };\n  return inner;\n};\n`;
  assert.equal(await longFunctions('x.ts', text, MAX_LINES), ['x.ts:4 (105 lines)', 'x.ts:5 (102 lines)']);
});

test('no export that no other file uses', () => {
  const files = sources(['*.ts', '*.mts', 'ui/*.js']);
  const texts = new Map(files.map((f) => [f, fs.readFileSync(path.join(ROOT, f), 'utf8')] as const));
  assert.equal(deadExports(texts), []);
});

test('the export check finds an export used nowhere or only in its own file, not one imported', () => {
  const texts = new Map([
    ['a.ts', 'export const used = 1;\nexport function dead() {}\nexport type Local = number;\nconst l: Local = 2;\n'],
    ['b.ts', "import { used } from './a.ts';\nconsole.log(used);\n"],
  ]);
  assert.equal(deadExports(texts), ['a.ts: dead', 'a.ts: Local']);
});

test.run();
