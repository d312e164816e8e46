// A webhook receiver for the alerts bench: a real HTTP server on 127.0.0.1 that checks each
// delivery's signature as docs/api.md tells receivers to, records when each event id arrived (and
// how often), and can misbehave on demand: answer 500, hang (never answer), or be down (its port
// closed) and come back on the same port.
import { createHmac, timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

type ReceiverMode = 'ok' | 'error500' | 'hang';

export interface Arrival {
  eventId: string;
  at: number;
  watchId: string;
  signatureOk: boolean;
  /** False when the receiver took the event in but never answered (hang mode): the sender retries, a duplicate follows. */
  answered: boolean;
  /** The sender's port of the connection (which process sent it: bench/suites/alerts.ts, replica part). */
  remotePort: number;
}

/** The signature check of docs/api.md: v1 = hex HMAC-SHA256(secret, "<t>.<body>"), compared in constant time. */
function signatureValid(header: string | undefined, body: string, secret: string): boolean {
  const parts = Object.fromEntries((header ?? '').split(',').map((kv) => kv.split('=', 2) as [string, string]));
  if (!parts.t || !parts.v1) return false;
  const want = createHmac('sha256', secret).update(`${parts.t}.${body}`).digest();
  const got = Buffer.from(parts.v1, 'hex');
  return got.length === want.length && timingSafeEqual(got, want);
}

export class WebhookReceiver {
  mode: ReceiverMode = 'ok';
  /** Deliveries taken in (answered 2xx, or taken in and left hanging), in order. */
  readonly arrivals: Arrival[] = [];
  /** Requests seen in any mode (accepted or not). */
  requests = 0;
  private server: http.Server | null = null;
  private port = 0;
  private readonly hung = new Set<http.ServerResponse>();

  constructor(private readonly secrets: Map<string, string>) {}

  get url(): string {
    return `http://127.0.0.1:${this.port}/hook`;
  }

  async start(port = 0): Promise<void> {
    const server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        this.requests++;
        if (this.mode === 'error500') {
          res.writeHead(500).end('receiver failing on purpose');
          return;
        }
        const body = Buffer.concat(chunks).toString('utf8');
        const eventId = String(req.headers['x-alert-event-id'] ?? '');
        let watchId = '';
        try {
          watchId = (JSON.parse(body) as { watch_id: string }).watch_id;
        } catch {
          res.writeHead(400).end();
          return;
        }
        const secret = this.secrets.get(watchId) ?? '';
        const signatureOk = signatureValid(req.headers['x-alert-signature'] as string | undefined, body, secret);
        const answered = this.mode !== 'hang';
        this.arrivals.push({ eventId, at: Date.now(), watchId, signatureOk, answered, remotePort: req.socket.remotePort ?? 0 });
        if (answered) res.writeHead(204).end();
        else {
          // Taken in, never answered: the sender times out and sends the same event again.
          this.hung.add(res);
          res.on('close', () => this.hung.delete(res));
        }
      });
    });
    server.keepAliveTimeout = 5000;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => resolve());
    });
    this.server = server;
    this.port = (server.address() as AddressInfo).port;
  }

  /** Down: the port closed, every open connection cut (a crashed receiver). */
  async stop(): Promise<void> {
    const s = this.server;
    this.server = null;
    if (!s) return;
    for (const res of this.hung) res.destroy();
    this.hung.clear();
    s.closeAllConnections();
    await new Promise<void>((resolve) => s.close(() => resolve()));
  }

  /** Back up on the same port. */
  async restart(): Promise<void> {
    await this.start(this.port);
  }

  /** Distinct event ids taken in, how many deliveries repeated one, bad signatures. */
  counts(): { unique: number; duplicates: number; badSignatures: number; answered: number } {
    const ids = new Set(this.arrivals.map((a) => a.eventId));
    return {
      unique: ids.size,
      duplicates: this.arrivals.length - ids.size,
      badSignatures: this.arrivals.filter((a) => !a.signatureOk).length,
      answered: new Set(this.arrivals.filter((a) => a.answered).map((a) => a.eventId)).size,
    };
  }
}
