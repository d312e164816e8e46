// `npm run admin -- <command>`: accounts, keys and credits, JSON out; `ledger export | import`
// moves a ledger between backends (ledger-dump.ts). The ledger is the one the data directory
// records (../backend-record.ts): DATABASE_URL's, or `npm run cluster`'s own PostgreSQL as recorded,
// or the file ledger. For the file ledger, one writer, always: when a server holds the ledger and announces its loopback admin endpoint
// (DATA_DIR/ledger/admin-endpoint.json), the CLI goes through it with ADMIN_TOKEN, or with the
// token the server wrote into that owner-only file when none was set; otherwise it opens the
// ledger itself under the ledger's exclusive lock.
import fs from 'node:fs';
import path from 'node:path';
import { parseCliArgs, UsageError } from '../../core/infra/cli-args.ts';
import { loadConfig } from '../../core/infra/config.ts';
import { dataDirLayout } from '../../core/infra/data-dir.ts';
import { LockHeld, processAlive } from '../../core/infra/lock.ts';
import { redactUrl } from '../../core/infra/postgres/pool.ts';
import { ADMIN_ENDPOINT_FILE, type AdminAnnouncement } from './admin-api.ts';
import { AdminInputError, parseAdminInput, runAdminCommand, type AdminCommand } from './admin-ops.ts';
import { dataDirPrefix, LedgerChoiceError, readBackend } from '../backend-record.ts';
import { LedgerError, type LedgerStore } from '../ledger-store.ts';
import { DumpError, exportLedger, readDump } from './ledger-dump.ts';
import { importInto, openLedgerStore, type LedgerChoice } from '../open-ledger-store.ts';

const HELP = `usage: npm run admin -- <command> [options] [--data-dir DIR]

  accounts create --name NAME
  accounts show   --account ACCOUNT_ID
  keys create     --account ACCOUNT_ID [--name NAME]     prints the secret once
  keys revoke     --key KEY_ID
  credits topup   --account ACCOUNT_ID --credits X [--note TEXT]   X: positive, at most 6 decimals
  ledger export   --out FILE                              accounts, key hashes, balances, usage entries (JSON lines)
  ledger import   --in FILE --into file|postgres [--merge]
                  into the file ledger, or DATABASE_URL's PostgreSQL; it becomes DATA_DIR's ledger

Prints JSON. While a server (npm start, npm run serve) holds the ledger, commands go through its
loopback admin endpoint: with the server's ADMIN_TOKEN when it was started with one (set the same
ADMIN_TOKEN here), else with the token it wrote to DATA_DIR/ledger/admin-endpoint.json. Without a
running server the ledger is opened directly. When DATA_DIR's ledger is PostgreSQL's (DATABASE_URL,
or npm run cluster's own server while it runs) the CLI writes to it directly, beside the replicas.

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

/** A clear line for what opening or using a ledger can meet; anything else is a bug and throws. */
function failOn(err: unknown, c: LedgerChoice): never {
  if (err instanceof LockHeld)
    fail(`the ledger is held by pid ${err.owner.pid}, which announces no admin endpoint; stop it or run it with ADMIN_TOKEN set`);
  if (err instanceof LedgerChoiceError || err instanceof DumpError || err instanceof LedgerError) fail(err.message);
  if (err instanceof AdminInputError) fail(err.message, 2);
  const code = (err as NodeJS.ErrnoException).code;
  if (c.databaseUrl && (code === 'ECONNREFUSED' || code === 'ENOTFOUND' || code === '28P01' || code === '3D000'))
    fail(
      c.local
        ? `npm run cluster's PostgreSQL (${redactUrl(c.databaseUrl)}) is not running: start ${dataDirPrefix(path.dirname(c.dir))}npm run cluster first`
        : `PostgreSQL at ${redactUrl(c.databaseUrl)}: ${(err as Error).message}`,
    );
  throw err;
}

async function direct(c: LedgerChoice, run: (ledger: LedgerStore) => Promise<unknown>): Promise<void> {
  let ledger: LedgerStore;
  try {
    ledger = await openLedgerStore(c);
  } catch (err) {
    failOn(err, c);
  }
  try {
    out(await run(ledger));
  } catch (err) {
    failOn(err, c);
  } finally {
    await ledger.close();
  }
}

/** The ledger DATA_DIR records (DATABASE_URL checked against it); null for the file ledger. */
async function postgresChoice(dir: string, databaseUrl: string | undefined, leaseMs: number): Promise<LedgerChoice | null> {
  if (databaseUrl) return { dir, databaseUrl, leaseMs };
  let recorded;
  try {
    recorded = await readBackend(dir);
  } catch (err) {
    fail((err as Error).message);
  }
  if (recorded?.kind !== 'postgres') return null;
  if (recorded.localUrl) return { dir, databaseUrl: recorded.localUrl, leaseMs, local: true };
  fail(
    `${path.dirname(dir)} uses the PostgreSQL ledger ${recorded.ledgerId} at ${recorded.database}: set DATABASE_URL to it (with its password)`,
    2,
  );
}

async function ledgerCommand(
  values: { out?: string | undefined; in?: string | undefined; into?: string | undefined; merge?: boolean | undefined },
  verb: string,
  dir: string,
  databaseUrl: string | undefined,
  leaseMs: number,
): Promise<void> {
  if (verb === 'export') {
    if (!values.out) fail('ledger export needs --out FILE', 2);
    const pg = await postgresChoice(dir, databaseUrl, leaseMs);
    if (!pg) {
      const a = announced(dir);
      if (a) fail(`a server (pid ${a.pid}) holds the file ledger: stop it first, so the export is the ledger's last state`);
    }
    const file = path.resolve(values.out);
    return direct(pg ?? { dir }, async (ledger) => ({ exported: file, ...(await exportLedger(ledger, file)) }));
  }
  if (verb !== 'import') fail(`unknown command "ledger ${verb}"`, 2, true);
  if (!values.in || (values.into !== 'file' && values.into !== 'postgres'))
    fail('ledger import needs --in FILE and --into file or --into postgres', 2);
  if (values.into === 'postgres' && !databaseUrl)
    fail(
      `ledger import --into postgres needs DATABASE_URL; into npm run cluster's own PostgreSQL: ` +
        `${dataDirPrefix(path.dirname(dir))}npm run cluster -- --import ${values.in}`,
      2,
    );
  const c: LedgerChoice = values.into === 'postgres' ? { dir, databaseUrl, leaseMs } : { dir };
  try {
    const dump = await readDump(path.resolve(values.in));
    out({
      imported: path.resolve(values.in),
      into: values.into,
      ...(await importInto(c, dump, values.merge)),
      ledgerOf: path.dirname(dir),
    });
  } catch (err) {
    failOn(err, c);
  }
}

/** The admin endpoint a live server announces for the file ledger, if any. */
function announced(dir: string): AdminAnnouncement | null {
  const announce = path.join(dir, ADMIN_ENDPOINT_FILE);
  if (!fs.existsSync(announce)) return null;
  let a: AdminAnnouncement;
  try {
    a = JSON.parse(fs.readFileSync(announce, 'utf8')) as AdminAnnouncement;
  } catch (err) {
    fail(`${announce}: ${(err as Error).message} (a server announces its admin endpoint there; read it as the user that runs the server)`);
  }
  return processAlive(a.pid) ? a : null;
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
        out: { type: 'string' },
        in: { type: 'string' },
        into: { type: 'string' },
        merge: { type: 'boolean' },
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
  if (positionals[0] === 'ledger' && positionals.length === 2) {
    const config = loadConfig(values['data-dir'] ? { ...process.env, DATA_DIR: values['data-dir'] } : process.env);
    return ledgerCommand(values, positionals[1]!, dataDirLayout(config.dataDir).ledger, config.DATABASE_URL, config.LEDGER_LEASE_MS);
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
  const run = (ledger: LedgerStore) => runAdminCommand(ledger, command, input);
  // PostgreSQL takes any number of writers: the CLI is one more, beside the running replicas.
  const pg = await postgresChoice(dir, config.DATABASE_URL, config.LEDGER_LEASE_MS);
  if (pg) return direct(pg, run);
  const a = announced(dir);
  if (a) return viaEndpoint(a.url, command, input, a.token ?? config.ADMIN_TOKEN);
  return direct({ dir }, run);
}

await main();
