// Worker threads whose entry is a .ts module. They are loaded through tsx's API, so this works
// however the parent was started (tsx CLI, node --import tsx, or the test runner).
import { Worker } from 'node:worker_threads';

export function spawnTsWorker(entry: URL, workerData?: unknown): Worker {
  const target = entry.href;
  const api = import.meta.resolve('tsx/esm/api');
  const boot = `import(${JSON.stringify(api)}).then(({ tsImport }) => tsImport(${JSON.stringify(target)}, ${JSON.stringify(target)}))`;
  return new Worker(boot, { eval: true, workerData });
}
