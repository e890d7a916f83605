#!/usr/bin/env node
'use strict';
/**
 * `npm run bench [-- name ...]`: runs every bench/*.ts (or only the named ones) with tsx, one after another.
 * Exits non-zero when any benchmark fails.
 */
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const ROOT = path.resolve(__dirname, '..');
const BENCH_DIR = path.join(ROOT, 'bench');
const TSX = path.join(ROOT, 'node_modules', '.bin', 'tsx');

const wanted = process.argv.slice(2).map((name) => name.replace(/\.ts$/, ''));
const files = fs
  .readdirSync(BENCH_DIR)
  .filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts'))
  .filter((f) => wanted.length === 0 || wanted.includes(f.replace(/\.ts$/, '')))
  .sort();

if (files.length === 0) {
  process.stderr.write(`no benchmarks found${wanted.length ? ` named ${wanted.join(', ')}` : ''} in bench/\n`);
  process.exit(1);
}

let failed = 0;
for (const file of files) {
  process.stdout.write(`\n=== bench/${file} ===\n`);
  const r = spawnSync(TSX, [path.join(BENCH_DIR, file)], { cwd: ROOT, stdio: 'inherit', env: process.env });
  if (r.status !== 0) {
    failed += 1;
    process.stderr.write(`bench/${file} failed (${r.status === null ? r.signal : `exit ${r.status}`})\n`);
  }
}
process.exit(failed ? 1 : 0);
