/**
 * The event hub's LISTEN connection when a stream's start races the hub's close (an API process shutting down as a
 * browser connects): no connection is left open that nothing would end. One kept a jest worker alive past the end of
 * a run, and would keep an API process from exiting.
 */
import { randomUUID } from 'node:crypto';
import { loadConfig } from '../../config/env';
import { logger } from '../../config/logger';
import { createEventHub, type EventHub, type EventSubscriber } from '../../services/platform/events';
import { closeTestKnex, testKnex } from '../support/db';

const config = loadConfig();

const subscriber = (): EventSubscriber => ({ onEvent: () => undefined, onClose: () => undefined });

function hubNamed(): { hub: EventHub; name: string } {
  const name = `event-hub-race-${randomUUID().slice(0, 8)}`;
  return { hub: createEventHub({ databaseUrl: config.databaseUrl, knex: testKnex(), logger, applicationName: name }), name };
}

async function connections(name: string): Promise<number> {
  const row = await testKnex()('pg_stat_activity').where({ application_name: name }).count({ n: '*' }).first();
  return Number(row?.n ?? 0);
}

/** Waits until the database has `count` connections of this name (an ended one takes a moment to go). */
async function untilConnections(name: string, count: number): Promise<void> {
  for (let seen = await connections(name); seen !== count; seen = await connections(name)) {
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

afterAll(closeTestKnex);

describe('the event hub closing while a stream starts', () => {
  it('leaves no connection when it closes while the first stream is still connecting', async () => {
    const { hub, name } = hubNamed();
    const subscribing = hub.subscribe(randomUUID(), subscriber());
    await hub.close();
    await expect(subscribing).rejects.toThrow();
    await untilConnections(name, 0);
  });
});
