import { Connection } from '@temporalio/client';
import { closeTemporalClient, createTemporalClient, getTemporalClient } from '../../services/platform/temporalClient';
import { closedPort } from '../support/http';

describe('Temporal client factory', () => {
  const config = () => ({ temporalAddress: process.env.TEMPORAL_ADDRESS ?? '', temporalNamespace: 'default' });

  afterEach(closeTemporalClient);

  it('connects to TEMPORAL_ADDRESS in TEMPORAL_NAMESPACE', async () => {
    const { client, close } = await createTemporalClient(config());
    try {
      expect(client.options.namespace).toBe('default');
      const info = await client.workflowService.describeNamespace({ namespace: 'default' });
      expect(info.namespaceInfo?.name).toBe('default');
    } finally {
      await close();
    }
  });

  it('shares one lazily connected client until it is closed', async () => {
    const first = await getTemporalClient(config());
    const again = await getTemporalClient(config());
    expect(again).toBe(first);

    await closeTemporalClient();
    const fresh = await getTemporalClient(config());
    expect(fresh).not.toBe(first);
    await expect(fresh.workflowService.getSystemInfo({})).resolves.toBeDefined();
  });

  it('does not keep a failed connection: it is closed, and the next call connects again', async () => {
    const unreachable = { temporalAddress: `127.0.0.1:${await closedPort()}`, temporalNamespace: 'default' };

    const closes = jest.spyOn(Connection.prototype, 'close');
    try {
      await expect(getTemporalClient(unreachable)).rejects.toThrow();
      // its gRPC channel would otherwise go on reconnecting for the life of the process
      expect(closes).toHaveBeenCalledTimes(1);
    } finally {
      closes.mockRestore();
    }
    const client = await getTemporalClient(config());
    await expect(client.workflowService.getSystemInfo({})).resolves.toBeDefined();
  }, 30_000);
});
