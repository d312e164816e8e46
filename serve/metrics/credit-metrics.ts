// Credits held, charged and released, counted where every caller's money passes: a wrapper
// around the ledger (whichever engine keeps it) that watches hold, settle and release and leaves
// the billing itself to the ledger and its callers (billing/holds.ts, search-route.ts, the job
// runner). Each process counts what went through it: on replicas, sum the counters over them.
// The open holds are the ledger's own figure, read at the scrape (with PostgreSQL, every
// replica's holds together, the same on each replica).
import { Counter, Gauge, type Registry } from 'prom-client';
import { LedgerError, type CreditLedger } from '../../ledger/credit-ledger.ts';
import { toCredits } from '../../ledger/money.ts';

export class CreditMetrics {
  private readonly held: Counter<'outcome'>;
  private readonly creditsHeld: Counter;
  private readonly charged: Counter;
  private readonly released: Counter<'reason'>;
  /** Amounts of the holds placed through this process and not yet resolved, to know what a settle released. */
  private readonly open = new Map<string, number>();

  constructor(private readonly registry: Registry) {
    this.held = new Counter({
      name: 'ci_credit_holds_total',
      help: 'Holds asked of the ledger: placed, or refused for insufficient credits (the 402s)',
      labelNames: ['outcome'] as const,
      registers: [registry],
    });
    this.creditsHeld = new Counter({ name: 'ci_credits_held_total', help: 'Credits placed on hold before work', registers: [registry] });
    this.charged = new Counter({ name: 'ci_credits_charged_total', help: 'Credits charged by settlements', registers: [registry] });
    this.released = new Counter({
      name: 'ci_credits_released_total',
      help: 'Credits of holds given back: refund (a whole hold released: failures, searches handed to a job) or unused (a settled hold less its charge)',
      labelNames: ['reason'] as const,
      registers: [registry],
    });
    for (const outcome of ['placed', 'refused']) this.held.inc({ outcome }, 0);
    for (const reason of ['refund', 'unused']) this.released.inc({ reason }, 0);
  }

  /** The ledger the server hands to everything else; the open holds gauge reads it at each scrape. */
  wrap(inner: CreditLedger): CreditLedger {
    new Gauge({
      name: 'ci_credit_holds_open',
      help: 'Holds placed and not yet settled or released (the ledger, all replicas with PostgreSQL)',
      registers: [this.registry],
      async collect() {
        // A ledger closing under a scrape: no figure rather than a failed scrape.
        const status = await inner.status().catch(() => null);
        if (status) this.set(status.openHolds);
        else this.reset();
      },
    });
    const hold: CreditLedger['hold'] = async (p) => {
      const r = await inner.hold(p);
      this.held.inc({ outcome: r.ok ? 'placed' : 'refused' });
      if (r.ok) {
        this.open.set(r.hold.id, r.hold.amountMicro);
        this.creditsHeld.inc(toCredits(r.hold.amountMicro));
      }
      return r;
    };
    const settle: CreditLedger['settle'] = async (holdId, chargeMicro, idem) => {
      const amount = await this.amountOf(inner, holdId);
      const r = await this.resolving(holdId, inner.settle(holdId, chargeMicro, idem));
      this.charged.inc(toCredits(r.chargedMicro));
      if (amount !== null) this.released.inc({ reason: 'unused' }, toCredits(amount - r.chargedMicro));
      return r;
    };
    const release: CreditLedger['release'] = async (holdId, reason) => {
      const amount = await this.amountOf(inner, holdId);
      const r = await this.resolving(holdId, inner.release(holdId, reason));
      if (amount !== null) this.released.inc({ reason: 'refund' }, toCredits(amount));
      return r;
    };
    const own: Partial<CreditLedger> = { hold, settle, release };
    return new Proxy(inner, {
      get(target, prop) {
        const mine = own[prop as keyof CreditLedger];
        if (mine) return mine;
        const v = Reflect.get(target, prop, target) as unknown;
        return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
      },
    });
  }

  /** A hold this process placed, or (rare: placed before a restart, or by another replica) the ledger's open hold; null when gone. */
  private async amountOf(inner: CreditLedger, holdId: string): Promise<number | null> {
    const mine = this.open.get(holdId);
    if (mine !== undefined) return mine;
    return (await inner.openHolds()).find((h) => h.id === holdId)?.amountMicro ?? null;
  }

  /** Forget the hold once the ledger resolved it, or said it was no longer open. */
  private async resolving<T>(holdId: string, call: Promise<T>): Promise<T> {
    try {
      const r = await call;
      this.open.delete(holdId);
      return r;
    } catch (err) {
      if (err instanceof LedgerError && err.code === 'hold_not_open') this.open.delete(holdId);
      throw err;
    }
  }
}
