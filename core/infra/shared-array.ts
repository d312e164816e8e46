// Typed arrays in SharedArrayBuffers: what the server's worker threads read in place instead of
// each holding a copy (search-index columns, content and enrichment columns).

type SharableArray = Int8Array | Uint8Array | Uint32Array | Int32Array | Float32Array | Float64Array;

/** The array itself when it already lives in a SharedArrayBuffer, else a copy that does. */
export function toShared<T extends SharableArray>(a: T): T {
  if (a.buffer instanceof SharedArrayBuffer) return a;
  const out = new (a.constructor as new (b: SharedArrayBuffer) => T)(new SharedArrayBuffer(a.byteLength));
  out.set(a as never);
  return out;
}
