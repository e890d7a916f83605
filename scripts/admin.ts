/**
 * `npm run admin -- grant <email> | revoke <email> | list`: the admin role (DESIGN.md "Billing").
 * Works on the database `npm start` uses: DATABASE_URL when set, else the embedded PostgreSQL in .data/postgres
 * (started here for the moment the command needs it when `npm start` is not running).
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Knex } from 'knex';
import { connectDatabase } from '../db/connection';
import { UserNotFoundError } from '../domain/errors';
import { grantAdminRole, listAdmins, revokeAdminRole } from '../services/accounts/admin';

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

Database: DATABASE_URL when set. Otherwise the embedded PostgreSQL that \`npm start\` uses
(127.0.0.1:EMBEDDED_PG_PORT, default 54320, database ${EMBEDDED_DATABASE}, data in DATA_DIR/postgres, default .data/postgres);
when \`npm start\` is not running, the command starts that database for the moment it needs it.

Exit status: 0 done (also when nothing had to change), 1 failed (e.g. no account with that e-mail), 2 usage error.`;

class UsageError extends Error {}

interface Database {
  knex: Knex;
  close(): Promise<void>;
}

/** The database `npm start` would use, and how to let go of it. */
async function openDatabase(env: NodeJS.ProcessEnv): Promise<Database> {
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

function emailArgument(args: string[], command: string): string {
  if (args.length !== 1) throw new UsageError(`${command} takes one e-mail address`);
  const email = args[0].trim();
  if (!/^[^\s@]+@[^\s@]+$/.test(email)) throw new UsageError(`"${args[0]}" is not an e-mail address`);
  return email;
}

async function run(knex: Knex, command: string, args: string[]): Promise<string> {
  if (command === 'grant') {
    const { user, changed } = await grantAdminRole(knex, emailArgument(args, command));
    return changed ? `${user.email} is now an admin` : `${user.email} is already an admin; nothing changed`;
  }
  if (command === 'revoke') {
    const { user, changed } = await revokeAdminRole(knex, emailArgument(args, command));
    return changed ? `${user.email} is no longer an admin` : `${user.email} is not an admin; nothing changed`;
  }
  if (args.length) throw new UsageError('list takes no arguments');
  const admins = await listAdmins(knex);
  return admins.length ? admins.map((a) => a.email).join('\n') : 'No admins yet: npm run admin -- grant <email>';
}

async function main(argv: string[]): Promise<number> {
  const [command, ...args] = argv;
  if (command === undefined || command === 'help' || command === '--help' || command === '-h') {
    process.stdout.write(`${USAGE}\n`);
    return command === undefined ? 2 : 0;
  }
  if (!['grant', 'revoke', 'list'].includes(command)) {
    process.stderr.write(`Unknown command "${command}"\n\n${USAGE}\n`);
    return 2;
  }
  let db: Database | null = null;
  try {
    // check the arguments before touching a database
    if (command !== 'list') emailArgument(args, command);
    else if (args.length) throw new UsageError('list takes no arguments');
    db = await openDatabase(process.env);
    process.stdout.write(`${await run(db.knex, command, args)}\n`);
    return 0;
  } catch (err) {
    if (err instanceof UsageError) {
      process.stderr.write(`${err.message}\n\n${USAGE}\n`);
      return 2;
    }
    if (err instanceof UserNotFoundError) {
      process.stderr.write(`${err.message}: the person signs up first, then run this again\n`);
      return 1;
    }
    const pgCode = (err as { code?: unknown }).code;
    if (pgCode === '42P01') {
      process.stderr.write('The database has no users table yet: run `npm start` (or `npm run migrate`) first\n');
      return 1;
    }
    process.stderr.write(`npm run admin failed: ${(err as Error).message}\n`);
    return 1;
  } finally {
    if (db) await db.close();
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`npm run admin failed: ${(err as Error).message}\n`);
    process.exit(1);
  },
);
