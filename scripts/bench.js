#!/usr/bin/env node
'use strict';
/**
 * `npm run bench [-- name ...] [--json [file.json]] [--compare old.json]`
 *   runs every bench/*.ts (or only the named ones) with tsx, one after another; exits non-zero when any fails.
 *   --json [file.json]   writes every figure and ratio of this run to one JSON file (default bench-results-<time>.json)
 *   --compare old.json   after the run, prints each ratio's and figure's change against an earlier --json file
 * `npm run bench -- --compare old.json new.json` compares two saved files without running anything.
 * Any other option goes to the benches run, as given: `npm run bench -- soak --duration 5m --chaos` (a bench's own
 * knobs; a value follows its option, or is joined with `=`).
 */
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { readRecords, buildDocument, loadDocument, compareDocuments, formatComparison } = require('./lib/benchResults');

const ROOT = path.resolve(__dirname, '..');
const BENCH_DIR = path.join(ROOT, 'bench');
const TSX = path.join(ROOT, 'node_modules', '.bin', 'tsx');

function parseArgs(argv) {
  const opts = { names: [], json: null, wantJson: false, compare: null, compareNew: null, benchArgs: [] };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--json' || arg.startsWith('--json=')) {
      opts.wantJson = true;
      if (arg.includes('=')) opts.json = arg.slice('--json='.length);
      else if (argv[i + 1]?.endsWith('.json')) opts.json = argv[++i];
    } else if (arg === '--compare' || arg.startsWith('--compare=')) {
      opts.compare = arg.includes('=') ? arg.slice('--compare='.length) : argv[++i];
      if (!opts.compare) throw new Error('--compare needs the path of an earlier results file');
      if (argv[i + 1]?.endsWith('.json')) opts.compareNew = argv[++i];
    } else if (arg.startsWith('--')) {
      // a bench's own option, with its value when one follows
      opts.benchArgs.push(arg);
      if (!arg.includes('=') && argv[i + 1] !== undefined && !argv[i + 1].startsWith('--') && /^[\d.]+[a-z]*$/i.test(argv[i + 1])) opts.benchArgs.push(argv[++i]);
    } else {
      opts.names.push(arg.replace(/\.ts$/, ''));
    }
  }
  return opts;
}

function printComparison(oldFile, newDoc) {
  const rows = compareDocuments(loadDocument(oldFile), newDoc);
  process.stdout.write(`\n=== compared with ${oldFile} ===\n${formatComparison(rows)}\n`);
  const worse = rows.filter((r) => r.verdict === 'WORSE' && r.kind === 'ratio');
  process.stdout.write(worse.length ? `${worse.length} ratio(s) worse by 5 % or more: ${worse.map((r) => `${r.bench}.${r.name}`).join(', ')}\n` : 'no ratio worse by 5 % or more\n');
}

function main() {
  let opts;
  try {
    opts = parseArgs(process.argv.slice(2));
  } catch (err) {
    process.stderr.write(`${err.message}\n`);
    return 2;
  }
  if (opts.compare && opts.compareNew) {
    printComparison(opts.compare, loadDocument(opts.compareNew));
    return 0;
  }
  if (opts.compare) loadDocument(opts.compare); // fail before a long run, not after it

  const files = fs
    .readdirSync(BENCH_DIR)
    .filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts'))
    .filter((f) => opts.names.length === 0 || opts.names.includes(f.replace(/\.ts$/, '')))
    .sort();
  if (files.length === 0) {
    process.stderr.write(`no benchmarks found${opts.names.length ? ` named ${opts.names.join(', ')}` : ''} in bench/\n`);
    return 1;
  }

  const collect = opts.wantJson || opts.compare;
  const startedAt = new Date().toISOString();
  const recordsFile = collect ? path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'bench-results-')), 'records.jsonl') : null;
  const env = recordsFile ? { ...process.env, BENCH_RESULTS_FILE: recordsFile } : process.env;
  const failed = [];
  for (const file of files) {
    process.stdout.write(`\n=== bench/${file} ===\n`);
    const r = spawnSync(TSX, [path.join(BENCH_DIR, file), ...opts.benchArgs], { cwd: ROOT, stdio: 'inherit', env });
    if (r.status !== 0) {
      failed.push(file.replace(/\.ts$/, ''));
      process.stderr.write(`bench/${file} failed (${r.status === null ? r.signal : `exit ${r.status}`})\n`);
    }
  }

  if (recordsFile) {
    const doc = buildDocument(readRecords(recordsFile), failed, startedAt);
    fs.rmSync(path.dirname(recordsFile), { recursive: true, force: true });
    if (opts.wantJson) {
      const out = path.resolve(opts.json ?? `bench-results-${startedAt.replace(/[:.]/g, '-')}.json`);
      fs.writeFileSync(out, `${JSON.stringify(doc, null, 2)}\n`);
      process.stdout.write(`\nresults written to ${out}\n`);
    }
    if (opts.compare) printComparison(opts.compare, doc);
  }
  return failed.length ? 1 : 0;
}

process.exitCode = main();
