// The ledger's boundary checks (core/infra/assert.ts), made by both stores before a record is
// built: what the serving layer hands the ledger (an account from a verified key, an amount from a
// price) is checked where it enters, so a caller's bug stops there instead of being written into
// the history every replay folds. Bad input from a person (an admin's credits, an unknown account)
// is refused before this with an error made for them (LedgerError, MoneyError, the admin's messages).
import { assert } from '../core/infra/assert.ts';
import type { HoldInput } from './ledger-store.ts';
import { MAX_MICRO, type Micro } from './money.ts';

/**
 * A hold: an account id as text (an unknown one is the store's LedgerError, "no account"), an integer
 * amount in [0, MAX_MICRO] (a hold of nothing is allowed: the reference model places them), text where
 * text is recorded.
 */
export function assertHoldInput(p: HoldInput): void {
  assert(typeof p.account === 'string', () => `hold: ${JSON.stringify(p.account)} is not an account id`);
  assert(
    Number.isSafeInteger(p.amountMicro) && p.amountMicro >= 0 && p.amountMicro <= MAX_MICRO,
    () => `hold: ${p.amountMicro} is not an integer of micro-credits in [0, ${MAX_MICRO}]`,
  );
  assert(typeof p.ref === 'string' && typeof p.what === 'string', 'hold: ref and what are text');
  assert(p.key === undefined || p.key === null || typeof p.key === 'string', 'hold: key is a key id or none');
}

/** A settlement or a release names its hold by id; a settlement's charge is an integer (its bound is the hold's: a LedgerError). */
export function assertResolution(holdId: string, chargeMicro: Micro | null, reason: string | null): void {
  assert(typeof holdId === 'string', 'a settlement or release names its hold by id');
  assert(chargeMicro === null || Number.isSafeInteger(chargeMicro), () => `settlement: ${chargeMicro} is not an integer of micro-credits`);
  assert(reason === null || typeof reason === 'string', 'release: the reason is text');
}
