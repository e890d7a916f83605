#!/usr/bin/env node
'use strict';
/**
 * Writes tests/setup/testDurations.json (the order tests/setup/testSequencer.js starts files in) from a full run's
 * `jest --json --outputFile=<file>` output: `node tests/setup/testDurations.js <file>`.
 */
const fs = require('node:fs');
const path = require('node:path');

const ROOT = path.resolve(__dirname, '..', '..');
const input = process.argv[2];
if (!input) {
  process.stderr.write('usage: node tests/setup/testDurations.js <jest --json output file>\n');
  process.exit(2);
}
const results = JSON.parse(fs.readFileSync(input, 'utf8')).testResults;
const seconds = {};
for (const r of [...results].sort((a, b) => b.endTime - b.startTime - (a.endTime - a.startTime))) {
  // a short file's place in the order hardly matters: it counts by its size (tests/setup/testSequencer.js)
  if (r.endTime - r.startTime < 5000) continue;
  seconds[path.relative(ROOT, r.name).split(path.sep).join('/')] = Math.round((r.endTime - r.startTime) / 100) / 10;
}
const file = path.join(__dirname, 'testDurations.json');
const about = JSON.parse(fs.readFileSync(file, 'utf8')).about;
fs.writeFileSync(file, `${JSON.stringify({ about, seconds }, null, 2)}\n`);
process.stdout.write(`${Object.keys(seconds).length} files written to ${path.relative(process.cwd(), file)}\n`);
