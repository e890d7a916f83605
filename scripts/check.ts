/**
 * `npm run check`: the invariant checker (services/platform/invariants.ts) on the installation `npm start` runs:
 * ledger and reservations per workspace, storage against rows, runs against job rows. Read-only: it changes nothing,
 * so it is safe on a live system. Prints a readable report (or `--json`) and exits 1 when an invariant does not hold.
 * The database as `npm run admin` finds it (DATABASE_URL, else the embedded PostgreSQL of `npm start`), storage and
 * Temporal from the same settings as the app (STORAGE_BACKEND, STORAGE_DIR, S3_*, TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE).
 */
import { randomBytes } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import { loadConfig } from '../config/env';
import { checkInvariants, INVARIANT_GRACE_MS, type InvariantDeps, type InvariantReport } from '../services/platform/invariants';
import { createStorage } from '../storage';
import { openDatabase } from './admin';

const USAGE = `Usage: npm run check -- [--json] [--grace-seconds <n>] [--no-temporal]

Checks, read-only, that
  - every workspace's balance is the sum of its ledger and its reserved credits the sum of its active reservations,
    neither negative;
  - every stored object has its row and every row's file is stored;
  - no workflow is still open for a finished job, and no job is left pending or processing with no open workflow.

  --json               the report as JSON
  --grace-seconds <n>  objects and rows younger than this are not judged (default ${INVARIANT_GRACE_MS / 1000}): an upload stores its
                       file before its row, a run closes a moment after it finishes its row
  --no-temporal        skip the workflow and job checks (Temporal not reachable from here)

Exit status: 0 every invariant holds, 1 one does not (or the check could not run), 2 usage error.`;

class UsageError extends Error {}

export interface CheckArguments {
  json: boolean;
  graceMs: number;
  temporal: boolean;
}

export function checkArguments(argv: string[]): CheckArguments | 'help' {
  const parsed: CheckArguments = { json: false, graceMs: INVARIANT_GRACE_MS, temporal: true };
  for (let i = 0; i < argv.length; i += 1) {
    const arg = argv[i];
    if (arg === '--help' || arg === '-h' || arg === 'help') return 'help';
    else if (arg === '--json') parsed.json = true;
    else if (arg === '--no-temporal') parsed.temporal = false;
    else if (arg === '--grace-seconds') {
      const value = argv[(i += 1)];
      if (value === undefined || !/^\d{1,7}$/.test(value)) throw new UsageError('--grace-seconds takes a whole number of seconds');
      parsed.graceMs = Number(value) * 1000;
    } else throw new UsageError(`Unknown argument "${arg}"`);
  }
  return parsed;
}

function section(title: string, fine: string, problems: Array<[string, string[]]>): string[] {
  const found = problems.filter(([, list]) => list.length > 0);
  if (found.length === 0) return [`${title}: ${fine}`];
  return [`${title}:`, ...found.flatMap(([what, list]) => [`  ${what} (${list.length}):`, ...list.map((item) => `    - ${item}`)])];
}

/** The report as an operator reads it: one section per invariant, each problem on its own line. */
export function formatReport(report: InvariantReport): string {
  const { ledger, storage, workflows, jobs } = report;
  const lines = [`Invariant check at ${report.checkedAt} (objects and rows of the last ${Math.round(report.graceMs / 1000)} s not judged)`, ''];
  lines.push(
    ...section(`Ledger, ${ledger.accountsChecked} workspaces`, 'balance = ledger sum and reserved = active reservations everywhere, nothing negative', [
      ['Violations', ledger.violations.map((v) => `${v.workspaceId}: ${v.problem}`)],
    ]),
  );
  lines.push(
    ...section(`Storage, ${storage.objectsChecked} objects and ${storage.rowsChecked} files of rows`, 'every object has its row and every row its object', [
      ['Objects without a row', storage.objectsWithoutRow],
      ['Rows whose object is missing', storage.rowsWithoutObject],
    ]),
  );
  if (report.skipped.includes('workflows')) lines.push('Workflows and jobs: skipped (no Temporal)');
  else {
    lines.push(...section(`Workflows, ${workflows.checked} open runs`, 'none open for a finished job', [['Open for a finished job', workflows.openForFinishedJobs]]));
    lines.push(...section('Jobs', 'none left unfinished without an open run', [['Unfinished with no open run', jobs.nonTerminalStale]]));
  }
  const count = ledger.violations.length + storage.objectsWithoutRow.length + storage.rowsWithoutObject.length + workflows.openForFinishedJobs.length + jobs.nonTerminalStale.length;
  lines.push('', report.ok ? 'OK: every invariant holds.' : `NOT OK: ${count} problem${count === 1 ? '' : 's'}.`);
  return `${lines.join('\n')}\n`;
}

export interface CheckTarget extends InvariantDeps {
  close(): Promise<void>;
}

export interface CommandResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** The whole command: arguments first, then what `open` gives (the installation's, or a test's), closed at the end. */
export async function checkCommand(argv: string[], open: (args: CheckArguments) => Promise<CheckTarget>): Promise<CommandResult> {
  let args: CheckArguments | 'help';
  try {
    args = checkArguments(argv);
  } catch (err) {
    return { code: 2, stdout: '', stderr: `${(err as Error).message}\n\n${USAGE}\n` };
  }
  if (args === 'help') return { code: 0, stdout: `${USAGE}\n`, stderr: '' };
  let target: CheckTarget | null = null;
  try {
    target = await open(args);
    const report = await checkInvariants(target, { graceMs: args.graceMs });
    return { code: report.ok ? 0 : 1, stdout: args.json ? `${JSON.stringify(report, null, 2)}\n` : formatReport(report), stderr: '' };
  } catch (err) {
    return { code: 1, stdout: '', stderr: `npm run check failed: ${(err as Error).message}\n` };
  } finally {
    if (target) await target.close();
  }
}

/** The installation's database, storage and (unless --no-temporal) Temporal, connected without registering anything. */
async function openInstallation(args: CheckArguments): Promise<CheckTarget> {
  // the check signs no links: a random key stands in where the installation's own is not in the environment
  const config = loadConfig({ ...process.env, SIGNING_SECRET: process.env.SIGNING_SECRET || randomBytes(32).toString('hex') });
  const db = await openDatabase(process.env);
  let connection: Connection | null = null;
  try {
    const storage = createStorage(config).objects;
    let temporal: Client | undefined;
    if (args.temporal) {
      connection = await Connection.connect({ address: config.temporalAddress, connectTimeout: '10s' }).catch((err: unknown) => {
        throw new Error(`Temporal at ${config.temporalAddress} is not reachable (${(err as Error).message}); --no-temporal checks the ledger and storage only`);
      });
      temporal = new Client({ connection, namespace: config.temporalNamespace });
    }
    const opened = connection;
    return {
      knex: db.knex,
      storage,
      temporal,
      close: async () => {
        await opened?.close();
        await db.close();
      },
    };
  } catch (err) {
    await connection?.close();
    await db.close();
    throw err;
  }
}

// run as `npm run check` (tsx scripts/check.ts); imported by a test, it only exports
if (require.main === module) {
  checkCommand(process.argv.slice(2), openInstallation).then(
    (result) => {
      if (result.stdout) process.stdout.write(result.stdout);
      if (result.stderr) process.stderr.write(result.stderr);
      process.exit(result.code);
    },
    (err: unknown) => {
      process.stderr.write(`npm run check failed: ${(err as Error).message}\n`);
      process.exit(1);
    },
  );
}
