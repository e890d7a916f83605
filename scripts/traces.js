#!/usr/bin/env node
'use strict';
/**
 * `npm run traces`: a trace viewer on this machine without Docker, and the app sending its traces to it.
 * Installs PyPI's `arize-phoenix` on first use (scripts/lib/tools.js, a venv in .tools/phoenix), starts it on
 * 127.0.0.1:TRACES_PORT (6006; its data in DATA_DIR/phoenix), then runs `npm start` with
 * OTEL_EXPORTER_OTLP_ENDPOINT pointing at it (Phoenix takes OTLP/HTTP protobuf at /v1/traces) and TRACE_VIEWER_URL
 * set, so the Activity view links admins to each job's trace. Ctrl-C stops the app, then the viewer.
 *
 *   npm run traces                      the viewer and the app
 *   npm run traces -- --viewer-only     the viewer alone; prints what to give your own `npm start`
 */
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const tools = require('./lib/tools');

const ROOT = tools.ROOT;
const PORT = Number(process.env.TRACES_PORT || 6006);
const HOST = '127.0.0.1';
const VIEWER = `http://${HOST}:${PORT}`;
const DATA = path.resolve(ROOT, process.env.DATA_DIR ?? '.data');
const viewerOnly = process.argv.includes('--viewer-only');

function say(line) {
  process.stderr.write(`[traces] ${line}\n`);
}

/** Waits until the viewer answers on its port, or fails when it exits first or takes longer than `timeoutMs`. */
async function waitForViewer(child, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`Phoenix exited (${child.exitCode ?? child.signalCode}) before it answered on ${VIEWER}: see its lines above.`);
    try {
      const res = await fetch(`${VIEWER}/healthz`);
      if (res.ok) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`Phoenix did not answer on ${VIEWER} within ${timeoutMs / 1000}s.`);
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

function stopChild(child, signal = 'SIGTERM') {
  return new Promise((resolve) => {
    if (!child || child.exitCode !== null || child.signalCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill(signal);
  });
}

async function main() {
  tools.ensureNodeModules();
  const phoenixCommand = tools.ensurePhoenix();
  const workingDir = path.join(DATA, 'phoenix');
  fs.mkdirSync(workingDir, { recursive: true });
  // its own process group: Ctrl-C reaches the app first, and the viewer is stopped after it (the app's last spans land)
  const viewer = spawn(phoenixCommand, ['serve'], {
    cwd: ROOT,
    detached: true,
    stdio: ['ignore', 'inherit', 'inherit'],
    env: {
      ...process.env,
      PHOENIX_HOST: HOST,
      PHOENIX_PORT: String(PORT),
      // its OTLP/gRPC receiver (unused here: the app sends OTLP/HTTP) beside it, not on the usual 4317
      PHOENIX_GRPC_PORT: String(PORT + 1),
      PHOENIX_WORKING_DIR: workingDir,
      PHOENIX_TELEMETRY_ENABLED: 'false',
      // its banner and warnings, not every SQL statement of its migrations and each request
      PHOENIX_LOG_MIGRATIONS: 'false',
      PHOENIX_LOGGING_LEVEL: 'warning',
    },
  });
  let app = null;
  let stopping = false;
  /** `signal`: passed on to the app; a terminal's Ctrl-C has reached it already (one process group) */
  const stopAll = async (code, signal = 'SIGTERM') => {
    if (stopping) return;
    stopping = true;
    if (signal) await stopChild(app, signal);
    else if (app && app.exitCode === null && app.signalCode === null) await new Promise((resolve) => app.once('exit', resolve));
    await stopChild(viewer);
    process.exit(code);
  };
  process.on('SIGINT', () => void stopAll(0, process.stdin.isTTY ? null : 'SIGINT'));
  process.on('SIGTERM', () => void stopAll(0));
  viewer.on('exit', (code, signal) => {
    if (stopping) return;
    say(`Phoenix stopped (${code ?? signal}); stopping the app`);
    void stopAll(1);
  });

  say(`starting Phoenix ${tools.PHOENIX_VERSION} on ${VIEWER} (data in ${path.relative(ROOT, workingDir) || workingDir})`);
  await waitForViewer(viewer, 300_000);
  const appEnv = { OTEL_EXPORTER_OTLP_ENDPOINT: VIEWER, TRACE_VIEWER_URL: `${VIEWER}/redirects/traces/` };
  if (viewerOnly) {
    process.stdout.write(`\nTrace viewer (Phoenix): ${VIEWER}\nPoint the app at it (another terminal):\n  ${Object.entries(appEnv).map(([k, v]) => `${k}=${v}`).join(' ')} npm start\nCtrl-C stops the viewer.\n`);
    return;
  }
  say(`trace viewer ready: ${VIEWER}; starting the app with OTEL_EXPORTER_OTLP_ENDPOINT=${VIEWER}`);
  app = spawn(process.execPath, [path.join(ROOT, 'scripts', 'start.js')], { cwd: ROOT, stdio: 'inherit', env: { ...process.env, ...appEnv } });
  app.on('exit', (code, signal) => {
    if (stopping) return;
    say(`the app stopped (${code ?? signal}); stopping the viewer`);
    app = null;
    void stopAll(code ?? 1);
  });
}

main().catch((err) => {
  say(err.message);
  process.exit(1);
});
