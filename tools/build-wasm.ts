// `npm run wasm`: compile the product's WebAssembly text (*.wat) into the binaries it loads at run
// time (*.wasm beside them, committed, so running the service needs no compiler). wabt (the
// WebAssembly Binary Toolkit, a dev dependency) does the compiling; test/fast/wasm-kernels.test.ts holds
// each committed binary equal to its text compiled afresh.
import fs from 'node:fs';
import path from 'node:path';
import wabt from 'wabt';

const ROOT = path.resolve(import.meta.dirname, '..');
/** The text modules, relative to the repository root. */
export const WAT_FILES = ['core/clustering/int8-gram.wat', 'core/vectors/f32-dots.wat'];

export async function compileWat(file: string): Promise<Uint8Array> {
  const w = await wabt();
  const mod = w.parseWat(path.basename(file), fs.readFileSync(file, 'utf8'), { simd: true });
  try {
    mod.validate();
    return Uint8Array.from(mod.toBinary({}).buffer);
  } finally {
    mod.destroy();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  for (const rel of WAT_FILES) {
    const bytes = await compileWat(path.join(ROOT, rel));
    const out = path.join(ROOT, rel.replace(/\.wat$/, '.wasm'));
    fs.writeFileSync(out, bytes);
    console.log(`${rel} -> ${path.relative(ROOT, out)} (${bytes.length} bytes)`);
  }
}
