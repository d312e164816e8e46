// The admin operations (accounts, keys, credits), shared by the loopback admin endpoint and the
// CLI's direct mode, so both validate and answer identically. Input is untrusted JSON; output is
// JSON with credits as decimals. A key's secret appears once, in the keys.create answer.
import { z } from 'zod';
import { LedgerError, type LedgerStore } from '../ledger-store.ts';
import { MAX_MICRO, toCredits, toMicro, type Micro } from '../money.ts';

const text = (max: number) =>
  z
    .string({ error: (i) => (i.input === undefined ? 'is required' : 'must be a string') })
    .trim()
    .min(1, 'must not be empty')
    .max(max, `must be at most ${max} characters`);
const id = text(100);

/**
 * An amount of credits to add (number or decimal string) as micro-credits, or a message for each way
 * it can be wrong: not a number, finer than a micro-credit, not positive, too large.
 */
function creditsToAdd(value: number | string): { micro: Micro } | { error: string } {
  const given = String(value).trim();
  if (!/^-?\d+(\.\d+)?$/.test(given)) return { error: `must be a number of credits such as 50 or 0.25, got "${given}"` };
  if (/\.\d{7,}$/.test(given)) return { error: `has more than 6 decimals (the smallest amount is 0.000001 credits), got ${given}` };
  let micro: Micro;
  try {
    micro = toMicro(given);
  } catch {
    return { error: given.startsWith('-') ? `must be positive, got ${given}` : `must be at most ${toCredits(MAX_MICRO)}, got ${given}` };
  }
  return micro > 0 ? { micro } : { error: `must be positive, got ${given}` };
}

const adminSchemas = {
  'accounts.create': z.object({ name: text(200) }).strict(),
  'accounts.show': z.object({ account: id }).strict(),
  'keys.create': z.object({ account: id, name: text(200).default('default') }).strict(),
  'keys.revoke': z.object({ key: id }).strict(),
  'credits.topup': z
    .object({
      account: id,
      credits: z
        .union([z.number(), z.string()], { error: (i) => (i.input === undefined ? 'is required' : 'must be a number of credits') })
        .transform((v, ctx) => {
          const amount = creditsToAdd(v);
          if ('micro' in amount) return amount.micro;
          ctx.addIssue({ code: 'custom', message: amount.error });
          return z.NEVER;
        }),
      note: z.string({ error: 'must be a string' }).max(500, 'must be at most 500 characters').optional(),
    })
    .strict(),
} as const;

export type AdminCommand = keyof typeof adminSchemas;
export const ADMIN_COMMANDS = Object.keys(adminSchemas) as AdminCommand[];

export class AdminInputError extends Error {}

async function accountView(ledger: LedgerStore, account: string) {
  const a = await ledger.getAccount(account);
  if (!a) throw new LedgerError('not_found', `no account ${account}`);
  return {
    id: a.id,
    name: a.name,
    createdAt: a.createdAt,
    balance: toCredits(a.balanceMicro),
    held: toCredits(a.heldMicro),
    available: toCredits(a.availableMicro),
    openHolds: a.openHolds,
    keys: a.keys.map((k) => ({ id: k.id, name: k.name, createdAt: k.createdAt, revokedAt: k.revokedAt })),
  };
}

/** The command's input validated; messages name the field first ("credits must be positive, got -5"). */
export function parseAdminInput<C extends AdminCommand>(command: C, input: unknown): z.infer<(typeof adminSchemas)[C]> {
  const parsed = adminSchemas[command].safeParse(input ?? {});
  if (!parsed.success)
    throw new AdminInputError(parsed.error.issues.map((i) => (i.path.length ? `${i.path.join('.')} ${i.message}` : i.message)).join('; '));
  return parsed.data as z.infer<(typeof adminSchemas)[C]>;
}

export async function runAdminCommand(ledger: LedgerStore, command: AdminCommand, input: unknown): Promise<unknown> {
  switch (command) {
    case 'accounts.create': {
      const p = parseAdminInput(command, input);
      const a = await ledger.createAccount(p.name);
      return accountView(ledger, a.id);
    }
    case 'accounts.show':
      return accountView(ledger, parseAdminInput(command, input).account);
    case 'keys.create': {
      const p = parseAdminInput(command, input);
      const { key, secret } = await ledger.createKey(p.account, p.name);
      return {
        id: key.id,
        account: key.account,
        name: key.name,
        createdAt: key.createdAt,
        secret,
        note: 'the secret is shown once; only its SHA-256 is stored',
      };
    }
    case 'keys.revoke': {
      const k = await ledger.revokeKey(parseAdminInput(command, input).key);
      return { id: k.id, account: k.account, name: k.name, revokedAt: k.revokedAt };
    }
    case 'credits.topup': {
      // The schema reads `credits` and gives micro-credits.
      const { account, credits: amountMicro, note } = parseAdminInput(command, input);
      const b = await ledger.topup(account, amountMicro, note ?? null);
      return {
        account,
        added: toCredits(amountMicro),
        balance: toCredits(b.balanceMicro),
        available: toCredits(b.availableMicro),
      };
    }
  }
}
