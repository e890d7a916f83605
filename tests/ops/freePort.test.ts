/**
 * scripts/lib/services.js freePort: a port for a service started a moment later is picked below the kernel's
 * ephemeral range, where no outgoing connection can take it in between (a full run once lost npm start's API port to
 * one: EADDRINUSE five times over, then "crash-looping").
 */
import fs from 'node:fs';
import net from 'node:net';

const services = require('../../scripts/lib/services') as { freePort(): Promise<number> };

const ephemeralStart = Number(fs.readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);

it('picks distinct free ports below the ephemeral range, each one listenable', async () => {
  const ports: number[] = [];
  for (let i = 0; i < 20; i += 1) ports.push(await services.freePort());
  for (const port of ports) {
    expect(port).toBeGreaterThanOrEqual(15000);
    expect(port).toBeLessThan(ephemeralStart);
  }
  expect(new Set(ports).size).toBeGreaterThan(15);
  const server = net.createServer();
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(ports[0], '127.0.0.1', resolve));
  await new Promise((resolve) => server.close(resolve));
});

it('never answers a port a listener holds: 30 answers in a row, each held as it comes, are each listenable', async () => {
  const held: net.Server[] = [];
  try {
    for (let i = 0; i < 30; i += 1) {
      const port = await services.freePort();
      const server = net.createServer();
      await new Promise<void>((resolve, reject) => server.once('error', reject).listen(port, '127.0.0.1', resolve));
      held.push(server);
    }
  } finally {
    await Promise.all(held.map((s) => new Promise((resolve) => s.close(resolve))));
  }
  expect(held).toHaveLength(30);
});
