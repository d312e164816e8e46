// A watch's signing secret (docs/api.md, "Verifying a webhook"): derived, never stored. Each is
// HMAC-SHA256(signing key, watch id + secret_version), shown once when the watch is made; the
// signing key is ALERTS_SIGNING_KEY, or a random key kept in DATA_DIR/alerts/signing-key (mode
// 0600, made once by whichever process needs it first). So the watch store holds nothing that
// signs: a copy of it (a backup, the PostgreSQL tables) cannot forge an event.
import { createHmac, randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { Config } from '../../core/infra/config.ts';
import { dataDirLayout } from '../../core/infra/data-dir.ts';

const SIGNING_KEY_FILE = 'signing-key';

/** The configuration's signing key (signingKey below): ALERTS_SIGNING_KEY, or DATA_DIR/alerts's own. */
export const configuredSigningKey = (config: Config): Promise<Buffer> =>
  signingKey(dataDirLayout(config.dataDir).alerts, config.ALERTS_SIGNING_KEY);

/** The key every watch secret derives from: the configured one, or the data directory's own. A server loads it once (server.ts). */
export async function signingKey(alertsDir: string, configured: string | undefined): Promise<Buffer> {
  if (configured) return Buffer.from(configured, 'utf8');
  const file = path.join(alertsDir, SIGNING_KEY_FILE);
  await fs.mkdir(alertsDir, { recursive: true });
  try {
    // Exclusive create: two processes starting at once keep the same key (the loser reads the winner's).
    const fresh = randomBytes(32).toString('base64url');
    const h = await fs.open(file, 'wx', 0o600);
    try {
      await h.writeFile(fresh + '\n');
      await h.sync();
    } finally {
      await h.close();
    }
    return Buffer.from(fresh, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
  // Written by another process a moment ago: wait for its bytes (bounded).
  for (let i = 0; i < 100; i++) {
    const text = (await fs.readFile(file, 'utf8')).trim();
    if (text) return Buffer.from(text, 'utf8');
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`${file} is empty: delete it to make a new signing key (every watch gets a new secret)`);
}

/** whsec_<base64url>: the secret a watch's events are signed with. */
export function watchSecret(key: Buffer, watchId: string, version: number): string {
  return `whsec_${createHmac('sha256', key).update(`${watchId}:${version}`).digest('base64url')}`;
}

/**
 * The signature header of one delivery: `t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<body>")>`
 * (Stripe's scheme: the timestamp inside the signed text stops a replay of an old body).
 */
export function signatureHeader(secret: string, body: string, unixSeconds: number): string {
  const v1 = createHmac('sha256', secret).update(`${unixSeconds}.${body}`).digest('hex');
  return `t=${unixSeconds},v1=${v1}`;
}
