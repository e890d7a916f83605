/**
 * A real DNS server on 127.0.0.1 (UDP) for tests that need host names resolving to chosen addresses (a name that
 * points at a private network, a metadata service, loopback): it answers A and AAAA questions from a table and
 * NXDOMAIN for names it does not know. `resolver` asks it through Node's own DNS client (c-ares), so what is tested
 * is a real look-up over the wire, not a stubbed function.
 */
import dgram from 'node:dgram';
import { Resolver } from 'node:dns/promises';
import net from 'node:net';
import type { HostResolver, ResolvedAddress } from '../../services/integrations/webhookTargets';

export interface TestDnsServer {
  port: number;
  /** resolves through this server only (A and AAAA) */
  resolver: HostResolver;
  /** how many questions it answered */
  questions: () => number;
  close: () => Promise<void>;
}

function ipv6Bytes(address: string): Buffer {
  const [head, tail] = address.includes('::') ? address.split('::') : [address, undefined];
  const part = (s: string | undefined) => (s ? s.split(':') : []);
  const left = part(head);
  const right = part(tail);
  const groups = tail === undefined ? left : [...left, ...Array(8 - left.length - right.length).fill('0'), ...right];
  const out = Buffer.alloc(16);
  groups.forEach((g, i) => out.writeUInt16BE(parseInt(g, 16), i * 2));
  return out;
}

/** Reads the question's name; answers its end offset. */
function readName(msg: Buffer, offset: number): { name: string; end: number } {
  const labels: string[] = [];
  let at = offset;
  while (msg[at] !== 0) {
    const len = msg[at];
    labels.push(msg.subarray(at + 1, at + 1 + len).toString('ascii'));
    at += 1 + len;
  }
  return { name: labels.join('.').toLowerCase(), end: at + 1 };
}

function answer(query: Buffer, table: Record<string, string[]>): Buffer {
  const { name, end } = readName(query, 12);
  const qtype = query.readUInt16BE(end);
  const question = query.subarray(12, end + 4);
  const known = table[name];
  const wanted = (known ?? []).filter((a) => (qtype === 1 ? net.isIPv4(a) : qtype === 28 ? net.isIPv6(a) : false));
  const header = Buffer.alloc(12);
  query.copy(header, 0, 0, 2);
  header.writeUInt16BE(known ? 0x8180 : 0x8183, 2); // response, recursion desired + available; NXDOMAIN when unknown
  header.writeUInt16BE(1, 4);
  header.writeUInt16BE(wanted.length, 6);
  const records = wanted.map((address) => {
    const data = qtype === 1 ? Buffer.from(address.split('.').map(Number)) : ipv6Bytes(address);
    const rr = Buffer.alloc(12);
    rr.writeUInt16BE(0xc00c, 0); // the question's name
    rr.writeUInt16BE(qtype, 2);
    rr.writeUInt16BE(1, 4); // IN
    rr.writeUInt32BE(60, 6);
    rr.writeUInt16BE(data.length, 10);
    return Buffer.concat([rr, data]);
  });
  return Buffer.concat([header, question, ...records]);
}

/** Starts the server with `table`: host name (lower case) -> its addresses, IPv4 and IPv6 mixed. */
export async function startDnsServer(table: Record<string, string[]>): Promise<TestDnsServer> {
  const socket = dgram.createSocket('udp4');
  let questions = 0;
  socket.on('message', (msg, rinfo) => {
    questions += 1;
    socket.send(answer(msg, table), rinfo.port, rinfo.address);
  });
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  const port = socket.address().port;
  const client = new Resolver({ timeout: 2000, tries: 1 });
  client.setServers([`127.0.0.1:${port}`]);
  const resolver: HostResolver = async (hostname) => {
    const found: ResolvedAddress[] = [];
    for (const [family, resolve] of [
      [4, (h: string) => client.resolve4(h)],
      [6, (h: string) => client.resolve6(h)],
    ] as const) {
      try {
        for (const address of await resolve(hostname)) found.push({ address, family });
      } catch (err) {
        const code = (err as { code?: string }).code;
        if (code !== 'ENODATA' && code !== 'ENOTFOUND') throw err;
      }
    }
    return found;
  };
  return { port, resolver, questions: () => questions, close: () => new Promise<void>((resolve) => socket.close(() => resolve())) };
}
