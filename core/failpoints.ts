// Failpoints for crash tests (the FoundationDB / TiKV practice): a named point in a durable
// write path where a test can park the process and kill it with SIGKILL, deterministically and
// without sleeping. Off unless FAILPOINTS names the point; then the process writes
// FAILPOINT_DIR/<name> and waits forever for its kill.
import fs from 'node:fs';
import path from 'node:path';

const enabled = new Set((process.env.FAILPOINTS ?? '').split(',').map((s) => s.trim()).filter(Boolean));

export async function failpoint(name: string): Promise<void> {
  if (!enabled.has(name)) return;
  const dir = process.env.FAILPOINT_DIR ?? '.';
  fs.writeFileSync(path.join(dir, name), String(process.pid));
  await new Promise<never>(() => {
    setInterval(() => {}, 1 << 30);
  });
}
