// What the formatter cannot see to: no line of the product or its tests over 160 characters
// (Prettier wraps code at 140 but leaves a long string whole). The bench suites' report templates
// and the fixture phrase lists are text, not code, and are left out. Prettier's own check runs in
// `npm run lint` (.ci/run).
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ROOT } from '../helpers/child.ts';

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

test.run();
