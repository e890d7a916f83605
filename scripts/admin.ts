/**
 * `npm run admin -- grant <email> | revoke <email> | list`: the site admin role (DESIGN.md "Billing"), and
 * `npm run admin -- adjust <credits> ...`: a correction of a workspace's credits (DESIGN.md "Teams (workspaces)":
 * credits belong to the workspace, found by its name or a member's e-mail; the ledger records the admin).
 * Works on the database `npm start` uses: DATABASE_URL when set, else the embedded PostgreSQL in .data/postgres
 * (started here for the moment the command needs it when `npm start` is not running).
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Knex } from 'knex';
import { connectDatabase } from '../db/connection';
import { randomUUID } from 'node:crypto';
import { ADMIN_ADJUST_MAX, ADMIN_REASON_MAX_LENGTH } from '../domain/admin';
import { DomainError, UserNotFoundError } from '../domain/errors';
import { adjustUserCredits, grantAdminRole, listAdmins, revokeAdminRole } from '../services/accounts/admin';
import { markVerified } from '../services/accounts/accountSecurity';

interface EmbeddedPostgres {
  url: string;
  ensureDatabase(name: string): Promise<void>;
  stop(): Promise<void>;
}

interface LocalServices {
  portOpen(port: number, host?: string): Promise<boolean>;
  startEmbeddedPostgres(options: { dataDir: string; port: number }): Promise<EmbeddedPostgres>;
}

// plain JS module shared with npm start
// eslint-disable-next-line @typescript-eslint/no-require-imports
const services = require('./lib/services') as LocalServices;

const ROOT = path.resolve(__dirname, '..');
/** as in scripts/start.js: the embedded cluster's folder and database */
const EMBEDDED_DATA_DIR = path.join(path.resolve(ROOT, process.env.DATA_DIR ?? '.data'), 'postgres');
const EMBEDDED_DATABASE = 'render_studio';

const USAGE = `Usage: npm run admin -- <command>

Commands:
  grant <email>    give the account with this e-mail the admin role (its Admin view appears on the next page load)
  revoke <email>   take the admin role away; the account stays
  list             list the admins
  verify <email>   mark the account's e-mail address verified (an operator vouches for it)
  verify-existing  mark every account that is not verified yet as verified: once, after the upgrade that brought
                   verification, for the accounts that existed before it (otherwise each verifies at its next sign-in)
  adjust <credits> --reason <text> --by <admin email> <workspace>
                   add (10, +10) or remove (-10) credits of a workspace, recorded in its ledger with the admin
                   named by --by as the acting user. <workspace> is one of:
                     --email <email>                      that member's personal workspace
                     --email <email> --workspace <name>   the workspace of that name the member belongs to
                     --workspace <name>                   the only workspace with that name (refused, listing them, when several have it)
                     --workspace-id <id>
                   --key <key> makes a retry apply the change once (default: a new key each run)

Database: DATABASE_URL when set. Otherwise the embedded PostgreSQL that \`npm start\` uses
(127.0.0.1:EMBEDDED_PG_PORT, default 54320, database ${EMBEDDED_DATABASE}, data in DATA_DIR/postgres, default .data/postgres);
when \`npm start\` is not running, the command starts that database for the moment it needs it.

Exit status: 0 done (also when nothing had to change), 1 failed (e.g. no account with that e-mail), 2 usage error.`;

class UsageError extends Error {}

export interface Database {
  knex: Knex;
  close(): Promise<void>;
}

/** The database `npm start` would use, and how to let go of it. */
export async function openDatabase(env: NodeJS.ProcessEnv): Promise<Database> {
  if (env.DATABASE_URL) {
    const knex = connectDatabase(env.DATABASE_URL, { min: 0, max: 2 });
    return { knex, close: () => knex.destroy() };
  }
  const port = Number(env.EMBEDDED_PG_PORT ?? 54320);
  if (!Number.isInteger(port) || port < 1 || port > 65535) throw new Error(`EMBEDDED_PG_PORT must be a port number, got "${env.EMBEDDED_PG_PORT}"`);
  let embedded: EmbeddedPostgres | null = null;
  let url = `postgres://postgres:postgres@127.0.0.1:${port}/${EMBEDDED_DATABASE}`;
  if (!(await services.portOpen(port))) {
    if (!fs.existsSync(path.join(EMBEDDED_DATA_DIR, 'PG_VERSION'))) {
      throw new Error('No database to work on: set DATABASE_URL, or run `npm start` once so the embedded PostgreSQL exists.');
    }
    embedded = await services.startEmbeddedPostgres({ dataDir: EMBEDDED_DATA_DIR, port });
    url = `${embedded.url}/${EMBEDDED_DATABASE}`;
  }
  const knex = connectDatabase(url, { min: 0, max: 2 });
  return {
    knex,
    close: async () => {
      await knex.destroy();
      if (embedded) await embedded.stop();
    },
  };
}

export interface AdjustArguments {
  amount: number;
  reason: string;
  by: string;
  email?: string;
  workspace?: string;
  workspaceId?: string;
  key?: string;
}

const ADJUST_OPTIONS: Record<string, keyof AdjustArguments> = {
  '--reason': 'reason',
  '--by': 'by',
  '--email': 'email',
  '--workspace': 'workspace',
  '--workspace-id': 'workspaceId',
  '--key': 'key',
};

function isEmail(text: string): boolean {
  return /^[^\s@]+@[^\s@]+$/.test(text);
}

/** `adjust <credits> --reason <text> --by <admin email> <workspace>`, checked before a database is touched. */
export function adjustArguments(args: string[]): AdjustArguments {
  const found: Partial<Record<keyof AdjustArguments, string>> = {};
  let amountText: string | undefined;
  for (let i = 0; i < args.length; i += 1) {
    const arg = args[i];
    const [flag, inline] = arg.startsWith('--') && arg.includes('=') ? [arg.slice(0, arg.indexOf('=')), arg.slice(arg.indexOf('=') + 1)] : [arg, undefined];
    const key = ADJUST_OPTIONS[flag];
    if (key) {
      const value = inline ?? args[i + 1];
      if (inline === undefined) i += 1;
      if (value === undefined || (inline === undefined && value.startsWith('--'))) throw new UsageError(`${flag} needs a value`);
      if (found[key] !== undefined) throw new UsageError(`${flag} is given twice`);
      found[key] = value;
    } else if (/^[+-]?\d+$/.test(arg) && amountText === undefined) {
      amountText = arg;
    } else {
      throw new UsageError(arg.startsWith('-') && !/^[+-]?\d/.test(arg) ? `Unknown option "${arg}"` : `"${arg}" is not a whole number of credits`);
    }
  }
  if (amountText === undefined) throw new UsageError('adjust needs the number of credits, e.g. 10 or -10');
  const amount = Number(amountText);
  if (amount === 0) throw new UsageError('the number of credits must not be zero');
  if (Math.abs(amount) > ADMIN_ADJUST_MAX) throw new UsageError(`at most ${ADMIN_ADJUST_MAX} credits at once`);
  const reason = (found.reason ?? '').trim();
  if (!reason) throw new UsageError('--reason is required: it is recorded in the ledger and shown to the workspace');
  if (reason.length > ADMIN_REASON_MAX_LENGTH) throw new UsageError(`--reason is longer than ${ADMIN_REASON_MAX_LENGTH} characters`);
  const by = (found.by ?? '').trim();
  if (!by) throw new UsageError('--by is required: the e-mail of the site admin the ledger records as making the change');
  if (!isEmail(by)) throw new UsageError(`"${by}" is not an e-mail address`);
  if (found.email !== undefined && !isEmail(found.email.trim())) throw new UsageError(`"${found.email}" is not an e-mail address`);
  if (found.workspaceId !== undefined && (found.email !== undefined || found.workspace !== undefined)) {
    throw new UsageError('--workspace-id names the workspace on its own: leave out --email and --workspace');
  }
  if (found.workspaceId === undefined && found.email === undefined && found.workspace === undefined) {
    throw new UsageError('name the workspace: --email <member e-mail>, --workspace <name> (or both), or --workspace-id <id>');
  }
  if (found.workspace !== undefined && !found.workspace.trim()) throw new UsageError('--workspace must not be blank');
  return {
    amount,
    reason,
    by,
    email: found.email?.trim(),
    workspace: found.workspace?.trim(),
    workspaceId: found.workspaceId?.trim(),
    key: found.key?.trim() || undefined,
  };
}

function countCredits(n: number): string {
  return `${n} ${Math.abs(n) === 1 ? 'credit' : 'credits'}`;
}

async function adjust(knex: Knex, input: AdjustArguments): Promise<string> {
  const admin = await knex('users').whereRaw('lower(email::text) = ?', [input.by.toLowerCase()]).first<{ id: string; email: string; role: string } | undefined>('id', 'email', 'role');
  if (!admin || admin.role !== 'admin') {
    throw new DomainError(403, 'NOT_A_SITE_ADMIN', `--by must name a site admin: ${input.by} is not one (npm run admin -- grant ${input.by})`);
  }
  const result = await adjustUserCredits(
    knex,
    { id: admin.id, email: admin.email },
    {
      workspaceId: input.workspaceId,
      email: input.email,
      workspace: input.workspace,
      amount: input.amount,
      reason: input.reason,
      idempotencyKey: input.key ?? `cli-${randomUUID()}`,
    },
  );
  const what = result.amount > 0 ? `Added ${countCredits(result.amount)} to` : `Removed ${countCredits(-result.amount)} from`;
  const where = `${result.workspace.personal ? 'the personal workspace' : 'the workspace'} “${result.workspace.name}” (${result.workspace.id})`;
  const numbers = `balance ${result.credits.credits}, available ${result.credits.availableCredits}`;
  if (result.replayed) return `Already applied with this key; nothing changed. ${where}: ${numbers}`;
  return `${what} ${where}: ${numbers}. Recorded by ${admin.email}.`;
}

function emailArgument(args: string[], command: string): string {
  if (args.length !== 1) throw new UsageError(`${command} takes one e-mail address`);
  const email = args[0].trim();
  if (!/^[^\s@]+@[^\s@]+$/.test(email)) throw new UsageError(`"${args[0]}" is not an e-mail address`);
  return email;
}

async function run(knex: Knex, command: string, args: string[]): Promise<string> {
  if (command === 'adjust') return adjust(knex, adjustArguments(args));
  if (command === 'grant') {
    const { user, changed } = await grantAdminRole(knex, emailArgument(args, command));
    return changed ? `${user.email} is now an admin` : `${user.email} is already an admin; nothing changed`;
  }
  if (command === 'revoke') {
    const { user, changed } = await revokeAdminRole(knex, emailArgument(args, command));
    return changed ? `${user.email} is no longer an admin` : `${user.email} is not an admin; nothing changed`;
  }
  if (command === 'verify') {
    const email = emailArgument(args, command);
    const user = await knex('users').where({ email: email.toLowerCase() }).first<{ email: string; email_verified_at: Date | null } | undefined>('email', 'email_verified_at');
    if (!user) throw new DomainError(404, 'ACCOUNT_NOT_FOUND', `No account with the e-mail ${email}`);
    if (user.email_verified_at) return `${user.email} is already verified; nothing changed`;
    await markVerified(knex, { email });
    return `${user.email} is now verified`;
  }
  if (command === 'verify-existing') {
    if (args.length) throw new UsageError('verify-existing takes no arguments');
    const changed = await markVerified(knex, 'all');
    return changed === 0 ? 'Every account is already verified; nothing changed' : `Marked ${changed} ${changed === 1 ? 'account' : 'accounts'} verified`;
  }
  if (args.length) throw new UsageError('list takes no arguments');
  const admins = await listAdmins(knex);
  return admins.length ? admins.map((a) => a.email).join('\n') : 'No admins yet: npm run admin -- grant <email>';
}

export interface CommandResult {
  code: number;
  stdout: string;
  stderr: string;
}

const COMMANDS = ['grant', 'revoke', 'list', 'adjust', 'verify', 'verify-existing'];

/**
 * The whole command: arguments checked first, then the database `open` gives (the one `npm start` uses, or a test's),
 * closed again at the end. Answers the exit status and what to print.
 */
export async function adminCommand(argv: string[], open: () => Promise<Database>): Promise<CommandResult> {
  const [command, ...args] = argv;
  if (command === undefined || command === 'help' || command === '--help' || command === '-h') {
    return { code: command === undefined ? 2 : 0, stdout: `${USAGE}\n`, stderr: '' };
  }
  if (!COMMANDS.includes(command)) return { code: 2, stdout: '', stderr: `Unknown command "${command}"\n\n${USAGE}\n` };
  let db: Database | null = null;
  try {
    // check the arguments before touching a database
    if (command === 'adjust') adjustArguments(args);
    else if (command === 'verify-existing') {
      if (args.length) throw new UsageError('verify-existing takes no arguments');
    } else if (command !== 'list') emailArgument(args, command);
    else if (args.length) throw new UsageError('list takes no arguments');
    db = await open();
    return { code: 0, stdout: `${await run(db.knex, command, args)}\n`, stderr: '' };
  } catch (err) {
    if (err instanceof UsageError) return { code: 2, stdout: '', stderr: `${err.message}\n\n${USAGE}\n` };
    if (err instanceof UserNotFoundError && command !== 'adjust') {
      return { code: 1, stdout: '', stderr: `${err.message}: the person signs up first, then run this again\n` };
    }
    // a refusal the command explains (no such workspace, an ambiguous name with its matches, too few credits)
    if (err instanceof DomainError && err.status < 500) return { code: 1, stdout: '', stderr: `${err.message}\n` };
    const pgCode = (err as { code?: unknown }).code;
    if (pgCode === '42P01') {
      return { code: 1, stdout: '', stderr: 'The database has no users table yet: run `npm start` (or `npm run migrate`) first\n' };
    }
    return { code: 1, stdout: '', stderr: `npm run admin failed: ${(err as Error).message}\n` };
  } finally {
    if (db) await db.close();
  }
}

async function main(argv: string[]): Promise<number> {
  const result = await adminCommand(argv, () => openDatabase(process.env));
  if (result.stdout) process.stdout.write(result.stdout);
  if (result.stderr) process.stderr.write(result.stderr);
  return result.code;
}

// run as `npm run admin` (tsx scripts/admin.ts); imported by a test, it only exports
if (require.main === module) {
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (err: unknown) => {
      process.stderr.write(`npm run admin failed: ${(err as Error).message}\n`);
      process.exit(1);
    },
  );
}
