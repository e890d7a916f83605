/**
 * The API alone in its own process for benchmarks, so the load generator does not share its event loop.
 * Serves createApp on 127.0.0.1 at an ephemeral port (or PORT) against DATABASE_URL and prints `LISTENING <port>`.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

async function main(): Promise<void> {
  process.env.LOG_LEVEL = process.env.LOG_LEVEL ?? 'warn';
  // loaded after LOG_LEVEL is set: the logger reads it when its module is first imported
  const { buildAppDeps } = await import('../../api/deps');
  const { createApp } = await import('../../api/app');

  // the production wiring (api/server.ts): database pool, realtime hub, session cache
  const runtime = buildAppDeps();
  const server = http.createServer(createApp(runtime.deps).callback());
  await new Promise<void>((resolve) => server.listen(Number(process.env.PORT ?? 0), '127.0.0.1', resolve));
  process.stdout.write(`LISTENING ${(server.address() as AddressInfo).port}\n`);

  const stop = (): void => {
    server.closeAllConnections();
    server.close(() => {
      void runtime.close().finally(() => process.exit(0));
    });
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}

main().catch(async (err) => {
  const { exitOnConfigError } = await import('../../config/env');
  if (exitOnConfigError(err)) return;
  console.error(err);
  process.exit(1);
});
