/**
 * The API entry (`tsx api/server.ts`): configuration from env, database pool, the Koa app (which also serves
 * the built front end), listening on HOST:PORT, and a graceful stop on SIGTERM / SIGINT.
 */
import './tracingPreload'; // first: the instrumentations patch modules before they load
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import sharp from 'sharp';
import { exitOnConfigError, loadConfig, type AppConfig } from '../config/env';
import { logger } from '../config/logger';
import { createApp } from './app';
import { buildAppDeps } from './deps';
import { checkPricesAtStart } from '../services/billing/stripePrices';

const SHUTDOWN_GRACE_MS = 10_000;

export interface RunningServer {
  url: string;
  /** Stops accepting, lets in-flight requests finish (up to the grace period), then closes the pools. */
  close: () => Promise<void>;
}

export async function startServer(config: AppConfig = loadConfig()): Promise<RunningServer> {
  const runtime = buildAppDeps(config, logger);
  const server = http.createServer(createApp(runtime.deps).callback());
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port, config.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  // the configured Stripe Prices against the packages: a mismatch is logged as an error now (that package is refused)
  void checkPricesAtStart(config, logger).catch((err: unknown) => logger.error({ err }, 'stripe price check at start failed'));
  const { port } = server.address() as AddressInfo;
  const url = `http://${config.host === '0.0.0.0' ? '127.0.0.1' : config.host}:${port}`;
  let closing: Promise<void> | null = null;
  const close = () => {
    closing ??= (async () => {
      const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
      void runtime.deps.events?.close(); // open event streams end now instead of holding the close for the grace period
      server.closeIdleConnections();
      const timer = setTimeout(() => server.closeAllConnections(), SHUTDOWN_GRACE_MS);
      await stopped;
      clearTimeout(timer);
      await runtime.close();
    })();
    return closing;
  };
  return { url, close };
}

async function main(): Promise<void> {
  // libvips' operation cache only pays off for the same operation on the same input again, which thumbnails and
  // draft images of ever new uploads never are; off, as in the worker, RSS stays flat over a long run (the soak)
  sharp.cache(false);
  const config = loadConfig();
  const running = await startServer(config);
  logger.info({ url: running.url, frontendDist: config.frontendDist }, 'api listening');
  let signals = 0;
  const stop = (signal: NodeJS.Signals) => {
    signals += 1;
    if (signals > 1) process.exit(1); // a second Ctrl-C: do not wait any longer
    logger.info({ signal }, 'api stopping');
    running.close().then(
      () => {
        logger.info('api stopped');
        process.exit(0);
      },
      (err: unknown) => {
        logger.error({ err }, 'api stop failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

if (require.main === module) {
  main().catch((err: unknown) => {
    if (exitOnConfigError(err)) return;
    logger.fatal({ err }, 'api failed to start');
    process.exit(1);
  });
}
