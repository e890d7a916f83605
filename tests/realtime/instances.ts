/** API processes for the realtime tests: each its own app, its own hub (one LISTEN connection) and its own port. */
import { randomUUID } from 'node:crypto';
import type Koa from 'koa';
import { createApp } from '../../api/app';
import { loadConfig, type AppConfig } from '../../config/env';
import { logger } from '../../config/logger';
import { createEventHub, type EventHub } from '../../services/platform/events';
import { sseStreamsStoppedTotal, type SseStreamStopReason } from '../../services/platform/metrics';
import { testKnex } from '../support/db';
import { request, serve, type TestServer } from '../support/http';

export interface Instance {
  app: Koa;
  server: TestServer;
  hub: EventHub;
  config: AppConfig;
  /** The application_name of its LISTEN connection, unique to this instance. */
  name: string;
  close: () => Promise<void>;
}

export async function startInstance(options: { config?: Partial<AppConfig>; taskQueue?: string } = {}): Promise<Instance> {
  const config = { ...loadConfig(), ...options.config };
  const knex = testKnex();
  const name = `realtime-test-${randomUUID().slice(0, 8)}`;
  const hub = createEventHub({ databaseUrl: config.databaseUrl, knex, logger, applicationName: name });
  const queue = options.taskQueue;
  const taskQueues = queue ? { generation: queue, media: queue, approvals: queue, accountData: queue, onboarding: queue } : undefined;
  const app = createApp({ config, knex, logger, events: hub, taskQueues });
  const server = await serve(app);
  return {
    app,
    server,
    hub,
    config,
    name,
    close: async () => {
      await hub.close();
      await server.close();
    },
  };
}

/** sse_streams_stopped_total for one reason, as /metrics would show it. */
export async function streamsStopped(reason: SseStreamStopReason): Promise<number> {
  const { values } = await sseStreamsStoppedTotal.get();
  return values.find((v) => v.labels.reason === reason)?.value ?? 0;
}

/** Signs the user in once more: a second session (another browser) with its own token. */
export async function signInAgain(baseUrl: string, user: { email: string; password: string }): Promise<string> {
  const res = await request<{ token: string }>(baseUrl, '/api/auth/signin', { json: { email: user.email, password: user.password } });
  if (res.status !== 200) throw new Error(`sign-in answered ${res.status}`);
  return res.body.token;
}

export async function waitFor(check: () => Promise<boolean> | boolean, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 25));
  }
}
