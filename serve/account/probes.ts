// Unauthenticated probes for an orchestrator (docs/operations.md, "Probes"): GET {base_url}/livez
// answers 200 while the process serves HTTP at all (restart it when this fails); GET /readyz
// answers 200 when a generation is loaded and the ledger answers, 503 with the reasons otherwise
// (take it out of the load balancer; do not restart it: a database outage is not cured by a
// restart). /health stays the spec's, behind the key. Neither probe says more than that.
import Router from '@koa/router';
import type { LedgerStore } from '../../ledger/ledger-store.ts';
import type { SnapshotStore } from '../generation/snapshot-store.ts';

/** How long /readyz waits for the ledger before calling it unavailable (a probe's own timeout is often 1-5 s). */
const LEDGER_WAIT_MS = 2_000;

interface ProbeDeps {
  ledger: Pick<LedgerStore, 'status'>;
  snapshots: Pick<SnapshotStore, 'generation'>;
}

/** Whether the ledger answers within LEDGER_WAIT_MS; why not (no error text: it could name a host). */
async function ledgerProblem(ledger: ProbeDeps['ledger']): Promise<string | null> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<string>(
    (resolve) => (timer = setTimeout(() => resolve(`the ledger did not answer within ${LEDGER_WAIT_MS} ms`), LEDGER_WAIT_MS)),
  );
  try {
    return await Promise.race([ledger.status().then(() => null), late]);
  } catch (err) {
    return `the ledger is unavailable (${(err as NodeJS.ErrnoException).code ?? 'error'})`;
  } finally {
    clearTimeout(timer);
  }
}

export function probesRouter(deps: ProbeDeps): Router {
  const r = new Router();
  r.get('/livez', (ctx) => {
    ctx.body = { status: 'alive' };
  });
  r.get('/readyz', async (ctx) => {
    const gen = deps.snapshots.generation;
    const reasons = [gen ? null : 'no generation loaded', await ledgerProblem(deps.ledger)].filter((x): x is string => x !== null);
    ctx.status = reasons.length ? 503 : 200;
    ctx.body = reasons.length ? { status: 'not ready', reasons } : { status: 'ready', generation: gen!.id };
  });
  return r;
}
