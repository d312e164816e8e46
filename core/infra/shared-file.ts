// A file read into a SharedArrayBuffer: worker threads handed the view share the memory instead of
// each holding a copy (the server's search workers and its main thread read the same vectors and
// postings).
import fs from 'node:fs';

export function readFileShared(file: string): Uint8Array {
  const fd = fs.openSync(file, 'r');
  try {
    const size = fs.fstatSync(fd).size;
    const out = new Uint8Array(new SharedArrayBuffer(size));
    for (let at = 0; at < size;) {
      const n = fs.readSync(fd, out, at, Math.min(size - at, 1 << 30), at);
      if (n === 0) throw new Error(`${file}: file ended at byte ${at} of ${size}`);
      at += n;
    }
    return out;
  } finally {
    fs.closeSync(fd);
  }
}
