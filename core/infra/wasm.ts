// The product's WebAssembly kernels (*.wat beside their callers, compiled by `npm run wasm`):
// each module compiled once per thread (a few hundred bytes), instances made from it on demand.
import fs from 'node:fs';

// Node's WebAssembly global, as far as the kernels use it (@types/node 20 leaves it to lib.dom).
declare const WebAssembly: {
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object) => { exports: object };
};

/** A kernel's memory, as every module exports it. */
export interface WasmMemory {
  buffer: ArrayBuffer;
  grow(pages: number): number;
}

const WASM_PAGE = 65_536;

const modules = new Map<string, object>();

/** A new instance of the module at `url` (its exports as `T`), with a memory of its own. */
export function wasmInstance<T extends { memory: WasmMemory }>(url: URL): T {
  let mod = modules.get(url.href);
  if (!mod) modules.set(url.href, (mod = new WebAssembly.Module(fs.readFileSync(url))));
  return new WebAssembly.Instance(mod).exports as T;
}

/** Grow `memory` to at least `bytes`. */
export function reserve(memory: WasmMemory, bytes: number): void {
  if (memory.buffer.byteLength < bytes) memory.grow(Math.ceil((bytes - memory.buffer.byteLength) / WASM_PAGE));
}
