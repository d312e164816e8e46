// Which ledger a data directory uses (docs/ledger.md, "One ledger per data directory"): recorded in
// DATA_DIR/ledger/backend.json at first use, so a later start against the other backend (DATABASE_URL
// set or unset, another database) is refused with what to run, instead of silently opening an empty
// ledger beside the one that holds the money. No secret is stored: a PostgreSQL ledger is told by the
// identity its database keeps (ledger.identity) and shown by its URL without the password; only the
// cluster's own local server (npm run cluster, its fixed local password, README) is kept whole, so
// the admin CLI finds it without DATABASE_URL.
import fs from 'node:fs/promises';
import path from 'node:path';
import { writeFileAtomic } from '../core/infra/durable-fs.ts';
import { redactUrl } from '../core/infra/postgres/pool.ts';

const BACKEND_FILE = 'backend.json';

type LedgerKind = 'file' | 'postgres';

export interface BackendRecord {
  kind: LedgerKind;
  /** PostgreSQL: the identity its database keeps; a database with another is another ledger. */
  ledgerId?: string;
  /** PostgreSQL: the URL without its password, to say which database it was. */
  database?: string;
  /** `npm run cluster`'s local PostgreSQL: its URL (fixed local password), for the admin CLI. */
  localUrl?: string;
  recordedAt: string;
  /** Not written: inferred from a file ledger's log in a data directory older than this record. */
  inferred?: boolean;
}

/** A start against the other ledger: the message is one line, for a person, with commands to run. */
export class LedgerChoiceError extends Error {}

const shq = (s: string) => (/^[\w./=:@%+-]+$/.test(s) ? s : `'${s.replaceAll("'", "'\\''")}'`);

/** `DATA_DIR=... ` to put before a command when the data directory is not the default ./data. */
export function dataDirPrefix(dataDir: string): string {
  const abs = path.resolve(dataDir);
  if (abs === path.resolve('data')) return '';
  const rel = path.relative(process.cwd(), abs);
  return `DATA_DIR=${shq(rel && !rel.startsWith('..') && !path.isAbsolute(rel) ? rel : abs)} `;
}

/** What DATA_DIR/ledger records, or infers from a file ledger's log written before the record existed. */
export async function readBackend(ledgerDir: string): Promise<BackendRecord | null> {
  const file = path.join(ledgerDir, BACKEND_FILE);
  try {
    const r = JSON.parse(await fs.readFile(file, 'utf8')) as BackendRecord;
    if (r.kind !== 'file' && r.kind !== 'postgres') throw new Error(`kind ${JSON.stringify(r.kind)}`);
    return r;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw new LedgerChoiceError(`${file} is not readable: ${(err as Error).message}`);
  }
  const entries = await fs.readdir(ledgerDir).catch(() => [] as string[]);
  for (const e of entries)
    if (/^seg-\d+\.log$/.test(e) && (await fs.stat(path.join(ledgerDir, e))).size > 0)
      return { kind: 'file', recordedAt: '', inferred: true };
  return null;
}

export async function writeBackend(ledgerDir: string, r: Omit<BackendRecord, 'recordedAt' | 'inferred'>): Promise<void> {
  await fs.mkdir(ledgerDir, { recursive: true });
  // 0600: a local cluster's URL carries its (fixed, local) password.
  await writeFileAtomic(
    path.join(ledgerDir, BACKEND_FILE),
    JSON.stringify({ ...r, recordedAt: new Date().toISOString() }, null, 2) + '\n',
    0o600,
  );
}

export function describe(r: BackendRecord): string {
  if (r.kind === 'file') return 'the file ledger';
  return `the PostgreSQL ledger ${r.ledgerId} (${r.database}${r.localUrl ? ", npm run cluster's own server" : ''})`;
}

export interface Asked {
  kind: LedgerKind;
  /** PostgreSQL: the URL asked (only shown redacted). */
  databaseUrl?: string | undefined;
  /** PostgreSQL: the identity of the ledger the URL's database holds, once opened. */
  ledgerId?: string;
}

/**
 * The one-line refusal: what is recorded, what was asked, and the commands that migrate
 * (ledger export / import) or choose (DATABASE_URL, another DATA_DIR).
 */
export function mismatchMessage(dataDir: string, recorded: BackendRecord, asked: Asked): string {
  const d = dataDirPrefix(dataDir);
  const where = `${path.resolve(dataDir)} uses ${describe(recorded)}${recorded.inferred ? '' : ` (recorded in ledger/${BACKEND_FILE})`}`;
  const askedText =
    asked.kind === 'file'
      ? 'DATABASE_URL is not set, which asks for the file ledger'
      : `${asked.databaseUrl ? `DATABASE_URL (${redactUrl(asked.databaseUrl)})` : "npm run cluster's own PostgreSQL"} asks for ${
          asked.ledgerId ? `the PostgreSQL ledger ${asked.ledgerId}` : 'a PostgreSQL ledger'
        }`;
  const exportCmd = `${d}npm run admin -- ledger export --out ledger.jsonl`;
  const intoPg = asked.databaseUrl
    ? `DATABASE_URL=... ${d}npm run admin -- ledger import --into postgres --in ledger.jsonl`
    : `${d}npm run cluster -- --import ledger.jsonl`;
  const keep =
    recorded.kind === 'file'
      ? `keep it: ${d}npm start, without DATABASE_URL`
      : recorded.localUrl
        ? `keep it: ${d}npm run cluster`
        : `keep it: set DATABASE_URL to ${recorded.database}'s database`;
  const exportFirst = `${exportCmd}${recorded.localUrl ? ' (while the cluster runs)' : ''}`;
  const move =
    asked.kind === 'file'
      ? `move it to the file ledger: ${exportFirst}, then ${d}npm run admin -- ledger import --into file --in ledger.jsonl`
      : `move it: ${exportFirst}, then ${intoPg}`;
  return `${where}, but ${askedText}: ${keep}; ${move}; or use another data directory (DATA_DIR=./data-2)`;
}

/** Refuse a start whose ledger kind is not the one recorded (before any slow work). */
export async function checkKind(dataDir: string, ledgerDir: string, asked: Asked): Promise<BackendRecord | null> {
  const recorded = await readBackend(ledgerDir);
  if (recorded && recorded.kind !== asked.kind) throw new LedgerChoiceError(mismatchMessage(dataDir, recorded, asked));
  return recorded;
}
