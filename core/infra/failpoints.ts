// Failpoints for crash tests (the FoundationDB / TiKV practice): a named point in a durable
// write path where a test can park the process and then kill it (SIGKILL) or stop it (SIGTERM),
// deterministically and without sleeping. Off unless FAILPOINTS names the point; then the process
// writes FAILPOINT_DIR/<name> and waits until it is killed or its run is aborted.
import fs from 'node:fs';
import path from 'node:path';

const enabled = new Set(
  (process.env.FAILPOINTS ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean),
);

export async function failpoint(name: string, signal?: AbortSignal): Promise<void> {
  if (!enabled.has(name)) return;
  fs.writeFileSync(path.join(process.env.FAILPOINT_DIR ?? '.', name), String(process.pid));
  await new Promise<void>((_, reject) => {
    const keepAlive = setInterval(() => {}, 1 << 30);
    signal?.addEventListener(
      'abort',
      () => {
        clearInterval(keepAlive);
        reject(new Error(`aborted at failpoint ${name}`));
      },
      { once: true },
    );
  });
}
