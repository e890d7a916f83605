/**
 * The API alone in its own process for benchmarks, so the load generator does not share its event loop.
 * Serves createApp on 127.0.0.1 at an ephemeral port (or PORT) against DATABASE_URL and prints `LISTENING <port>`.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

async function main(): Promise<void> {
  process.env.LOG_LEVEL = process.env.LOG_LEVEL ?? 'warn';
  // loaded after LOG_LEVEL is set: the logger reads it when its module is first imported
  const { loadConfig } = await import('../../config/env');
  const { logger } = await import('../../config/logger');
  const { connectDatabase } = await import('../../db/connection');
  const { createApp } = await import('../../api/app');

  const config = loadConfig();
  const knex = connectDatabase(config.databaseUrl);
  const server = http.createServer(createApp({ config, knex, logger }).callback());
  await new Promise<void>((resolve) => server.listen(Number(process.env.PORT ?? 0), '127.0.0.1', resolve));
  process.stdout.write(`LISTENING ${(server.address() as AddressInfo).port}\n`);

  const stop = (): void => {
    server.closeAllConnections();
    server.close(() => {
      void knex.destroy().finally(() => process.exit(0));
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
