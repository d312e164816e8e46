// The layer rules of .dependency-cruiser.cjs (imports point down only: core <- pipeline, ledger <-
// serve <- app; core/'s and serve/'s folders in their order; stages apart; tests and benches apart; tools/ out of
// the product; no cycles), checked with dependency-cruiser over the whole repository. And the check
// itself can fail: the same rules over a small tree of wrong-way imports report each of them.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ROOT } from '../helpers/child.ts';
import { cleanupTmp, tmpDir } from '../helpers/tmp.ts';

const run = promisify(execFile);
const DEPCRUISE = path.join(ROOT, 'node_modules', '.bin', 'depcruise');
const CONFIG = path.join(ROOT, '.dependency-cruiser.cjs');

interface Violation {
  rule: { name: string };
  from: string;
  to: string;
}

async function cruise(cwd: string, dirs: string[]): Promise<{ violations: Violation[]; modules: number }> {
  // Exit code 1 when there are violations: the JSON report is on stdout either way.
  const { stdout } = await run(DEPCRUISE, ['--config', CONFIG, '--output-type', 'json', ...dirs], { cwd, maxBuffer: 64 << 20 }).catch(
    (err: { stdout?: string; message: string }) => {
      if (!err.stdout) throw err;
      return { stdout: err.stdout };
    },
  );
  const report = JSON.parse(stdout) as { summary: { violations: Violation[]; totalCruised: number } };
  return { violations: report.summary.violations, modules: report.summary.totalCruised };
}

test.after(cleanupTmp);

test('no import in the repository breaks a layer rule', async () => {
  const dirs = ['core', 'ledger', 'pipeline', 'serve', 'app', 'fixtures', 'bench', 'test', 'tools'];
  const { violations, modules } = await cruise(ROOT, dirs);
  assert.ok(modules > 200, `${modules} modules cruised (TypeScript must be parsed)`);
  assert.equal(
    violations.map((v) => `${v.rule.name}: ${v.from} -> ${v.to}`),
    [],
  );
});

test('a wrong-way import of each kind is reported', async () => {
  const d = tmpDir('layers-');
  const write = (file: string, text: string) => {
    fs.mkdirSync(path.dirname(path.join(d, file)), { recursive: true });
    fs.writeFileSync(path.join(d, file), text);
  };
  for (const f of [
    'core/a.ts',
    'ledger/a.ts',
    'pipeline/runner.ts',
    'pipeline/features/stage.ts',
    'pipeline/narratives/corpus.ts',
    'serve/a.ts',
    'app/start.ts',
    'bench/cli.ts',
    'test/a.test.ts',
    'fixtures/a.ts',
    'serve/http/a.ts',
    'serve/search/a.ts',
    'serve/billing/a.ts',
    'tools/a.ts',
  ]) {
    write(f, 'export const x = 1;\n');
  }
  write('core/up.ts', "import { x } from '../serve/a.ts';\nexport const y = x;\n");
  write('serve/up.ts', "import { x } from '../pipeline/runner.ts';\nexport const y = x;\n");
  write('ledger/up.ts', "import { x } from '../serve/a.ts';\nexport const y = x;\n");
  write('pipeline/patterns/across.ts', "import { x } from '../features/stage.ts';\nexport const y = x;\n");
  write('pipeline/narratives/within.ts', "import { x } from './corpus.ts';\nexport const y = x;\n");
  // A stage folder no list names (themes/ was one) is kept apart like the others; one inside its stage's folder is its stage's.
  write('pipeline/themes/build.ts', "import { x } from '../narratives/corpus.ts';\nexport const y = x;\n");
  write('pipeline/narratives/themes/build.ts', "import { x } from '../corpus.ts';\nexport const y = x;\n");
  // What the stages share is no stage: the stage list imports every stage.
  write('pipeline/run/stage-list.ts', "import { x } from '../features/stage.ts';\nexport const y = x;\n");
  write('pipeline/maps/up.ts', "import { x } from '../narratives/corpus.ts';\nexport const y = x;\n");
  write('test/bench.test.ts', "import { x } from '../bench/cli.ts';\nexport const y = x;\n");
  write('bench/app-entry.ts', "import { x } from '../app/start.ts';\nexport const y = x;\n");
  write('serve/generation/up.ts', "import { x } from '../search/a.ts';\nexport const y = x;\n");
  write('serve/maps/beside.ts', "import { x } from '../billing/a.ts';\nexport const y = x;\n");
  write('serve/search/top.ts', "import { x } from '../a.ts';\nexport const y = x;\n");
  write('serve/unlisted/a.ts', "import { x } from '../http/a.ts';\nexport const y = x;\n");
  write('ledger/tool.ts', "import { x } from '../tools/a.ts';\nexport const y = x;\n");
  write('tools/test-helper.ts', "import { x } from '../test/a.test.ts';\nexport const y = x;\n");
  write('core/loop-a.ts', "import { b } from './loop-b.ts';\nexport const a = () => b;\n");
  write('core/loop-b.ts', "import { a } from './loop-a.ts';\nexport const b = () => a;\n");
  const { violations } = await cruise(d, ['core', 'ledger', 'pipeline', 'serve', 'app', 'bench', 'test', 'fixtures', 'tools']);
  assert.equal(violations.map((v) => `${v.rule.name}: ${v.from} -> ${v.to}`).sort(), [
    'app-is-the-top: bench/app-entry.ts -> app/start.ts',
    'core-is-the-bottom: core/up.ts -> serve/a.ts',
    'ledger-on-core-only: ledger/up.ts -> serve/a.ts',
    'no-circular: core/loop-a.ts -> core/loop-b.ts',
    'pipeline-shared-under-stages: pipeline/maps/up.ts -> pipeline/narratives/corpus.ts',
    'product-not-on-tools: ledger/tool.ts -> tools/a.ts',
    'serve-folder-in-order: serve/unlisted/a.ts -> serve/http/a.ts',
    'serve-not-on-pipeline: serve/up.ts -> pipeline/runner.ts',
    'serve-order-generation: serve/generation/up.ts -> serve/search/a.ts',
    'serve-order-maps: serve/maps/beside.ts -> serve/billing/a.ts',
    'serve-order-search: serve/search/top.ts -> serve/a.ts',
    'stages-apart: pipeline/patterns/across.ts -> pipeline/features/stage.ts',
    'stages-apart: pipeline/themes/build.ts -> pipeline/narratives/corpus.ts',
    'tests-not-on-bench: test/bench.test.ts -> bench/cli.ts',
    'tools-not-on-tests: tools/test-helper.ts -> test/a.test.ts',
  ]);
});

test("a wrong-way import between core/'s rows is reported, a downward one is not", async () => {
  const d = tmpDir('layers-core-');
  const write = (file: string, text: string) => {
    fs.mkdirSync(path.dirname(path.join(d, file)), { recursive: true });
    fs.writeFileSync(path.join(d, file), text);
  };
  for (const f of ['core/a.ts', 'core/infra/a.ts', 'core/text/a.ts', 'core/vectors/a.ts', 'core/maps/a.ts', 'core/stats/a.ts']) {
    write(f, 'export const x = 1;\n');
  }
  const from = (file: string, to: string) => write(file, `import { x } from '${to}';\nexport const y = x;\n`);
  from('core/infra/up.ts', '../text/a.ts');
  from('core/text/up.ts', '../vectors/a.ts');
  from('core/maps/beside.ts', '../vectors/a.ts');
  from('core/clustering/top.ts', '../a.ts');
  from('core/unlisted/a.ts', '../infra/a.ts');
  from('core/ranking/down.ts', '../vectors/a.ts');
  from('core/clustering/down.ts', '../maps/a.ts');
  from('core/vectors/down.ts', '../stats/a.ts');
  const { violations } = await cruise(d, ['core']);
  assert.equal(violations.map((v) => `${v.rule.name}: ${v.from} -> ${v.to}`).sort(), [
    'core-folder-in-order: core/unlisted/a.ts -> core/infra/a.ts',
    'core-order-clustering: core/clustering/top.ts -> core/a.ts',
    'core-order-infra: core/infra/up.ts -> core/text/a.ts',
    'core-order-maps: core/maps/beside.ts -> core/vectors/a.ts',
    'core-order-text: core/text/up.ts -> core/vectors/a.ts',
  ]);
});

test.run();
