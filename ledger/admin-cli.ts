// `npm run admin -- <command>`: accounts, keys and credits, JSON out.
// One writer, always: when a server holds the ledger and announces its loopback admin endpoint
// (DATA_DIR/ledger/admin-endpoint.json), the CLI goes through it with ADMIN_TOKEN, or with the
// token the server wrote into that owner-only file when none was set; otherwise it opens the
// ledger itself under the ledger's exclusive lock.
import fs from 'node:fs';
import path from 'node:path';
import { parseCliArgs, UsageError } from '../core/cli-args.ts';
import { loadConfig } from '../core/config.ts';
import { dataDirLayout } from '../core/data-dir.ts';
import { LockHeld, processAlive } from '../core/lock.ts';
import { ADMIN_ENDPOINT_FILE, type AdminAnnouncement } from './admin-api.ts';
import { AdminInputError, parseAdminInput, runAdminCommand, type AdminCommand } from './admin-ops.ts';
import { LedgerError, type CreditLedger } from './credit-ledger.ts';
import { FileLedger } from './file-ledger.ts';
import { PgLedger } from './postgres/pg-ledger.ts';

const HELP = `usage: npm run admin -- <command> [options] [--data-dir DIR]

  accounts create --name NAME
  accounts show   --account ACCOUNT_ID
  keys create     --account ACCOUNT_ID [--name NAME]     prints the secret once
  keys revoke     --key KEY_ID
  credits topup   --account ACCOUNT_ID --credits X [--note TEXT]   X: positive, at most 6 decimals

Prints JSON. While a server (npm start, npm run serve) holds the ledger, commands go through its
loopback admin endpoint: with the server's ADMIN_TOKEN when it was started with one (set the same
ADMIN_TOKEN here), else with the token it wrote to DATA_DIR/ledger/admin-endpoint.json. Without a
running server the ledger is opened directly. With DATABASE_URL set the ledger is PostgreSQL's and
the CLI writes to it directly, beside any running replicas.

Errors are one JSON line with an "error" field on stderr. Exit codes: 0 done; 1 refused or failed
(e.g. no such account); 2 bad arguments.`;

/** The options each command takes: the required ones, then the optional ones. */
const TAKES: Record<AdminCommand, { required: string[]; optional: string[] }> = {
  'accounts.create': { required: ['name'], optional: [] },
  'accounts.show': { required: ['account'], optional: [] },
  'keys.create': { required: ['account'], optional: ['name'] },
  'keys.revoke': { required: ['key'], optional: [] },
  'credits.topup': { required: ['account', 'credits'], optional: ['note'] },
};

function out(value: unknown): void {
  process.stdout.write(JSON.stringify(value, null, 2) + '\n');
}

function fail(message: string, code = 1, help = false): never {
  process.stderr.write(JSON.stringify({ error: message }) + '\n' + (help ? HELP + '\n' : ''));
  process.exit(code);
}

async function viaEndpoint(url: string, command: AdminCommand, input: Record<string, unknown>, token: string | undefined): Promise<void> {
  if (!token) fail('a server holds the ledger and was started with ADMIN_TOKEN: set the same ADMIN_TOKEN to use its admin endpoint', 2);
  let res: Response;
  try {
    res = await fetch(`${url}/${command}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify(input),
    });
  } catch (err) {
    fail(`admin endpoint ${url} did not answer: ${(err as Error).message}`);
  }
  const body = (await res.json().catch(() => ({ error: `HTTP ${res.status}` }))) as { error?: string };
  if (!res.ok) fail(body.error ?? `HTTP ${res.status}`);
  out(body);
}

async function direct(open: () => Promise<CreditLedger>, command: AdminCommand, input: Record<string, unknown>): Promise<void> {
  let ledger: CreditLedger;
  try {
    ledger = await open();
  } catch (err) {
    if (err instanceof LockHeld)
      fail(`the ledger is held by pid ${err.owner.pid}, which announces no admin endpoint; stop it or run it with ADMIN_TOKEN set`);
    throw err;
  }
  try {
    out(await runAdminCommand(ledger, command, input));
  } catch (err) {
    if (err instanceof AdminInputError || err instanceof LedgerError) fail(err.message, err instanceof AdminInputError ? 2 : 1);
    throw err;
  } finally {
    await ledger.close();
  }
}

async function main(): Promise<void> {
  let parsed;
  try {
    parsed = parseCliArgs({
      allowPositionals: true,
      options: {
        name: { type: 'string' },
        account: { type: 'string' },
        key: { type: 'string' },
        credits: { type: 'string' },
        note: { type: 'string' },
        'data-dir': { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    });
  } catch (err) {
    if (err instanceof UsageError) fail(err.message, 2, true);
    throw err;
  }
  const { values, positionals } = parsed;
  if (values.help || positionals.length === 0) {
    process.stdout.write(HELP + '\n');
    process.exit(values.help ? 0 : 2);
  }
  const command = positionals.slice(0, 2).join('.') as AdminCommand;
  const takes = Object.hasOwn(TAKES, command) ? TAKES[command] : undefined;
  if (!takes || positionals.length !== 2) fail(`unknown command "${positionals.join(' ')}"`, 2, true);
  const given: Record<string, string | undefined> = {
    name: values.name,
    account: values.account,
    key: values.key,
    credits: values.credits,
    note: values.note,
  };
  // Options a command does not take are an error, not silently ignored.
  const allowed = [...takes.required, ...takes.optional];
  const extra = Object.keys(given).filter((k) => given[k] !== undefined && !allowed.includes(k));
  if (extra.length)
    fail(
      `${positionals.join(' ')} takes no ${extra.map((k) => `--${k}`).join(', ')} (it takes ${allowed.map((k) => `--${k}`).join(', ')})`,
      2,
    );
  const missing = takes.required.filter((k) => given[k] === undefined);
  if (missing.length) fail(`${positionals.join(' ')} needs ${missing.map((k) => `--${k}`).join(', ')}`, 2);
  const input = Object.fromEntries(allowed.filter((k) => given[k] !== undefined).map((k) => [k, given[k]]));
  // Checked here, with the rules the ledger applies, so bad input is exit code 2 whichever way the command goes.
  try {
    parseAdminInput(command, input);
  } catch (err) {
    if (err instanceof AdminInputError) fail(err.message, 2);
    throw err;
  }

  const config = loadConfig(values['data-dir'] ? { ...process.env, DATA_DIR: values['data-dir'] } : process.env);
  const dir = dataDirLayout(config.dataDir).ledger;
  // PostgreSQL takes any number of writers: the CLI is one more, beside the running replicas.
  if (config.DATABASE_URL)
    return direct(() => PgLedger.open({ databaseUrl: config.DATABASE_URL!, leaseMs: config.LEDGER_LEASE_MS }), command, input);
  const announce = path.join(dir, ADMIN_ENDPOINT_FILE);
  if (fs.existsSync(announce)) {
    let a: AdminAnnouncement;
    try {
      a = JSON.parse(fs.readFileSync(announce, 'utf8')) as AdminAnnouncement;
    } catch (err) {
      fail(
        `${announce}: ${(err as Error).message} (a server announces its admin endpoint there; read it as the user that runs the server)`,
      );
    }
    if (processAlive(a.pid)) return viaEndpoint(a.url, command, input, a.token ?? config.ADMIN_TOKEN);
  }
  return direct(() => FileLedger.open({ dir }), command, input);
}

await main();
