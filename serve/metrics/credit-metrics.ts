// Credits held, charged and released, counted where every caller's money passes: a wrapper
// around the ledger (whichever engine keeps it) that watches hold, settle and release and leaves
// the billing itself to the ledger and its callers (billing/holds.ts, search-route/search-route.ts, the job
// runner). Each process counts what went through it: on replicas, sum the counters over them.
// The open holds are the ledger's own figure, read at the scrape (with PostgreSQL, every
// replica's holds together, the same on each replica).
import { Counter, type Registry } from 'prom-client';
import { LedgerError, type LedgerStore } from '../../ledger/ledger-store.ts';
import { addMicro, subMicro, toCredits, ZERO_MICRO, type Micro } from '../../ledger/money.ts';
import { mirroredCounter, scrapedGauge } from './scraped.ts';

/** Sums of money in integer micro-credits, as the ledger keeps it; shown in credits at the scrape, so no float error adds up. */
interface Sums {
  heldMicro: Micro;
  chargedMicro: Micro;
  refundMicro: Micro;
  unusedMicro: Micro;
}

export class CreditMetrics {
  private readonly holds: Counter<'outcome'>;
  private readonly sums: Sums = { heldMicro: ZERO_MICRO, chargedMicro: ZERO_MICRO, refundMicro: ZERO_MICRO, unusedMicro: ZERO_MICRO };
  /** Amounts of the holds placed through this process and not yet resolved, to know what a settle released. */
  private readonly open = new Map<string, Micro>();

  constructor(private readonly registry: Registry) {
    this.holds = new Counter({
      name: 'ci_credit_holds_total',
      help: 'Holds asked of the ledger: placed, or refused for insufficient credits (the 402s)',
      labelNames: ['outcome'] as const,
      registers: [registry],
    });
    for (const outcome of ['placed', 'refused']) this.holds.inc({ outcome }, 0);
    const sums = this.sums;
    mirroredCounter(registry, 'ci_credits_held_total', 'Credits placed on hold before work', () => toCredits(sums.heldMicro));
    mirroredCounter(registry, 'ci_credits_charged_total', 'Credits charged by settlements', () => toCredits(sums.chargedMicro));
    new Counter({
      name: 'ci_credits_released_total',
      help: 'Credits of holds given back: refund (a whole hold released: failures, searches handed to a job) or unused (a settled hold less its charge)',
      labelNames: ['reason'] as const,
      registers: [registry],
      collect() {
        this.reset();
        this.inc({ reason: 'refund' }, toCredits(sums.refundMicro));
        this.inc({ reason: 'unused' }, toCredits(sums.unusedMicro));
      },
    });
  }

  /** The ledger the server hands to everything else; the open holds gauge reads it at each scrape. */
  wrap(inner: LedgerStore): LedgerStore {
    // A ledger closing under a scrape: no figure rather than a failed scrape.
    scrapedGauge(
      this.registry,
      'ci_credit_holds_open',
      'Holds placed and not yet settled or released (the ledger, all replicas with PostgreSQL)',
      async () => (await inner.status().catch(() => null))?.openHolds ?? null,
    );
    const hold: LedgerStore['hold'] = async (p) => {
      const r = await inner.hold(p);
      this.holds.inc({ outcome: r.ok ? 'placed' : 'refused' });
      if (r.ok) {
        this.open.set(r.hold.id, r.hold.amountMicro);
        this.sums.heldMicro = addMicro(this.sums.heldMicro, r.hold.amountMicro);
      }
      return r;
    };
    const settle: LedgerStore['settle'] = async (holdId, chargeMicro, idem) => {
      const heldMicro = await this.amountOf(inner, holdId);
      const r = await this.resolving(holdId, inner.settle(holdId, chargeMicro, idem));
      this.sums.chargedMicro = addMicro(this.sums.chargedMicro, r.chargedMicro);
      if (heldMicro !== null) this.sums.unusedMicro = addMicro(this.sums.unusedMicro, subMicro(heldMicro, r.chargedMicro));
      return r;
    };
    const release: LedgerStore['release'] = async (holdId, reason) => {
      const heldMicro = await this.amountOf(inner, holdId);
      const r = await this.resolving(holdId, inner.release(holdId, reason));
      if (heldMicro !== null) this.sums.refundMicro = addMicro(this.sums.refundMicro, heldMicro);
      return r;
    };
    const own: Partial<LedgerStore> = { hold, settle, release };
    return new Proxy(inner, {
      get(target, prop) {
        const mine = own[prop as keyof LedgerStore];
        if (mine) return mine;
        const v = Reflect.get(target, prop, target) as unknown;
        return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
      },
    });
  }

  /** A hold this process placed, or (rare: placed before a restart, or by another replica) the ledger's open hold; null when gone. */
  private async amountOf(inner: LedgerStore, holdId: string): Promise<Micro | null> {
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
