/**
 * A preload for finding what keeps a jest worker alive after the run ("A worker process has failed to exit
 * gracefully"): `NODE_OPTIONS="--require $PWD/tests/setup/workerExitWatch.js" npm test`. In each jest worker it logs the
 * test files the worker ran (with its sockets to PostgreSQL before each) and, 3 s after jest asks the worker to end,
 * the handles still open, to .data/test/worker-exit/<pid>.txt. Other processes ignore it.
 */
if (process.argv.some((a) => a.includes('jest-worker'))) {
  const fs = require('fs');
  const dir = require('path').resolve('.data/test/worker-exit');
  const out = require('path').join(dir, `${process.pid}.txt`);
  fs.mkdirSync(dir, { recursive: true });
  const listener = (m) => {
    if (!Array.isArray(m)) return;
    if (m[0] === 1) {
      try {
        const pgPort = Number(new URL(process.env.DATABASE_URL || 'postgres://x:1/').port);
        const pg = process._getActiveHandles().filter((h) => h.constructor?.name === 'Socket' && h.remotePort === pgPort).map((h) => h.localPort);
        fs.appendFileSync(out, `file ${Date.now()} ${JSON.stringify(m[3]?.[0]?.path ?? '')} pgsockets=${pg.join(',')}\n`);
      } catch {}
    }
    if (m[0] === 2) {
      fs.appendFileSync(out, `end ${Date.now()}\n`);
      process.removeListener('message', listener);
      const t0 = Date.now();
      process.on('exit', () => fs.appendFileSync(out, `exit ${Date.now() - t0} ms after end\n`));
      setTimeout(() => {
        const lines = process._getActiveHandles().map((h) => {
          const n = h.constructor?.name;
          if (n === 'Socket' || n === 'TCP') return `${n} ${h.localAddress}:${h.localPort}->${h.remoteAddress}:${h.remotePort} fd=${h._handle?.fd}`;
          if (n === 'ChildProcess') return `${n} ${h.spawnargs?.join(' ').slice(0, 200)}`;
          if (n === 'Timeout') return `${n} ${h._idleTimeout} ${String(h._onTimeout).slice(0, 300)}`;
          if (n === 'Server') return `${n} ${JSON.stringify(h.address?.())}`;
          return String(n);
        });
        fs.appendFileSync(out, `still up after 3s: ${lines.join('\n  ')}\nrequests: ${process._getActiveRequests().map((r) => r.constructor?.name).join(',')}\n`);
      }, 3000).unref();
    }
  };
  process.on('message', listener);
}
