// The admin operations (accounts, keys, credits), shared by the loopback admin endpoint and the
// CLI's direct mode, so both validate and answer identically. Input is untrusted JSON; output is
// JSON with credits as decimals. A key's secret appears once, in the keys.create answer.
import { z } from 'zod';
import { LedgerError, type CreditLedger } from './credit-ledger.ts';
import { toCredits, toMicro } from './money.ts';

const id = z.string().min(1).max(100);
export const adminSchemas = {
  'accounts.create': z.object({ name: z.string().trim().min(1).max(200) }).strict(),
  'accounts.show': z.object({ account: id }).strict(),
  'keys.create': z.object({ account: id, name: z.string().trim().min(1).max(200).default('default') }).strict(),
  'keys.revoke': z.object({ key: id }).strict(),
  'credits.topup': z
    .object({
      account: id,
      credits: z.union([z.number(), z.string()]).transform((v, ctx) => {
        try {
          const micro = toMicro(v);
          if (micro <= 0) throw new Error('must be positive');
          return micro;
        } catch (err) {
          ctx.addIssue({ code: 'custom', message: `credits ${(err as Error).message}` });
          return z.NEVER;
        }
      }),
      note: z.string().max(500).optional(),
    })
    .strict(),
} as const;

export type AdminCommand = keyof typeof adminSchemas;
export const ADMIN_COMMANDS = Object.keys(adminSchemas) as AdminCommand[];

export class AdminInputError extends Error {}

async function accountView(ledger: CreditLedger, account: string) {
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

function parse<C extends AdminCommand>(command: C, input: unknown): z.infer<(typeof adminSchemas)[C]> {
  const parsed = adminSchemas[command].safeParse(input ?? {});
  if (!parsed.success) throw new AdminInputError(parsed.error.issues.map((i) => `${i.path.join('.') || 'body'}: ${i.message}`).join('; '));
  return parsed.data as z.infer<(typeof adminSchemas)[C]>;
}

export async function runAdminCommand(ledger: CreditLedger, command: AdminCommand, input: unknown): Promise<unknown> {
  switch (command) {
    case 'accounts.create': {
      const p = parse(command, input);
      const a = await ledger.createAccount(p.name);
      return accountView(ledger, a.id);
    }
    case 'accounts.show':
      return accountView(ledger, parse(command, input).account);
    case 'keys.create': {
      const p = parse(command, input);
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
      const k = await ledger.revokeKey(parse(command, input).key);
      return { id: k.id, account: k.account, name: k.name, revokedAt: k.revokedAt };
    }
    case 'credits.topup': {
      const p = parse(command, input);
      const b = await ledger.topup(p.account, p.credits, p.note ?? null);
      return {
        account: p.account,
        added: toCredits(p.credits),
        balance: toCredits(b.balanceMicro),
        available: toCredits(b.availableMicro),
      };
    }
  }
}
