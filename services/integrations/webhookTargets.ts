/**
 * Where a webhook may be sent (DESIGN.md "Integrations"): the rules checked when an endpoint is registered or its URL
 * changed (services/integrations/webhookEndpoints.ts) and again before every send (the delivery activity connects to
 * the address resolved here, with the URL's Host and SNI, so a DNS answer that changes between the check and the
 * connection cannot point the request somewhere else).
 *
 * - `https://` only; plain `http://` only to a loopback address named literally (`localhost`, `127.0.0.1`, `[::1]`)
 *   and only when NODE_ENV is not `production` (a receiver on the developer's machine).
 * - No credentials in the URL (they would be sent to every hop and shown in the delivery log).
 * - Every address the host name resolves to must be public: loopback, private, link-local (the cloud metadata
 *   service), unique-local, CGNAT, multicast, documentation and reserved ranges are refused, unless the operator
 *   allows them (WEBHOOK_ALLOW_PRIVATE_TARGETS=on). A loopback literal outside production is the one exception above.
 *
 * The messages are the user's: they say what is wrong with the URL and what to do.
 */
import { lookup } from 'node:dns/promises';
import net from 'node:net';
import type { AppConfig } from '../../config/env';

export interface WebhookTargetPolicy {
  nodeEnv: string;
  allowPrivateTargets: boolean;
}

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** Resolves a host name to all its addresses (dns.lookup by default, which reads /etc/hosts like any client would). */
export type HostResolver = (hostname: string) => Promise<ResolvedAddress[]>;

export interface ResolvedWebhookTarget {
  url: URL;
  /** the address to connect to (the first public one the name resolved to) */
  address: string;
  family: 4 | 6;
}

export const WEBHOOK_TARGET_CODES = {
  invalid: 'WEBHOOK_URL_INVALID',
  notHttps: 'WEBHOOK_URL_NOT_HTTPS',
  credentials: 'WEBHOOK_URL_CREDENTIALS',
  private: 'WEBHOOK_TARGET_PRIVATE',
  unresolvable: 'WEBHOOK_TARGET_UNRESOLVABLE',
} as const;
export type WebhookTargetCode = (typeof WEBHOOK_TARGET_CODES)[keyof typeof WEBHOOK_TARGET_CODES];

/** A URL webhooks may not be sent to; `message` is shown to the user as it is. */
export class WebhookTargetError extends Error {
  constructor(
    readonly code: WebhookTargetCode,
    message: string,
  ) {
    super(message);
    this.name = 'WebhookTargetError';
  }
}

export function webhookTargetPolicy(config: Pick<AppConfig, 'nodeEnv' | 'webhookAllowPrivateTargets'>): WebhookTargetPolicy {
  return { nodeEnv: config.nodeEnv, allowPrivateTargets: config.webhookAllowPrivateTargets };
}

/** Address ranges that are not the public internet, each with the words the refusal uses. */
const RANGES: ReadonlyArray<{ cidr: string; kind: string }> = [
  { cidr: '0.0.0.0/8', kind: 'a reserved address' },
  { cidr: '10.0.0.0/8', kind: 'a private network address' },
  { cidr: '100.64.0.0/10', kind: 'a carrier-grade NAT address' },
  { cidr: '127.0.0.0/8', kind: 'a loopback address' },
  { cidr: '169.254.0.0/16', kind: 'a link-local address' },
  { cidr: '172.16.0.0/12', kind: 'a private network address' },
  { cidr: '192.0.0.0/24', kind: 'a reserved address' },
  { cidr: '192.0.2.0/24', kind: 'a documentation address' },
  { cidr: '192.88.99.0/24', kind: 'a reserved address' },
  { cidr: '192.168.0.0/16', kind: 'a private network address' },
  { cidr: '198.18.0.0/15', kind: 'a benchmarking address' },
  { cidr: '198.51.100.0/24', kind: 'a documentation address' },
  { cidr: '203.0.113.0/24', kind: 'a documentation address' },
  { cidr: '224.0.0.0/4', kind: 'a multicast address' },
  { cidr: '240.0.0.0/4', kind: 'a reserved address' },
  { cidr: '::/128', kind: 'a reserved address' },
  { cidr: '::1/128', kind: 'a loopback address' },
  { cidr: '64:ff9b:1::/48', kind: 'a reserved address' },
  { cidr: '100::/64', kind: 'a reserved address' },
  { cidr: '2001:db8::/32', kind: 'a documentation address' },
  { cidr: '2001::/23', kind: 'a reserved address' },
  { cidr: 'fc00::/7', kind: 'a unique-local (private network) address' },
  { cidr: 'fe80::/10', kind: 'a link-local address' },
  { cidr: 'fec0::/10', kind: 'a reserved address' },
  { cidr: 'ff00::/8', kind: 'a multicast address' },
];

const blockLists = RANGES.map(({ cidr, kind }) => {
  const [network, prefix] = cidr.split('/');
  const list = new net.BlockList();
  list.addSubnet(network, Number(prefix), net.isIPv6(network) ? 'ipv6' : 'ipv4');
  return { list, kind, family: net.isIPv6(network) ? ('ipv6' as const) : ('ipv4' as const) };
});

/**
 * The IPv4 address an IPv6 address carries (IPv4-mapped `::ffff:a.b.c.d`, IPv4-compatible `::a.b.c.d`, NAT64
 * `64:ff9b::a.b.c.d`), which is where a connection to it really goes; null for other addresses.
 */
function embeddedIpv4(address: string): string | null {
  const lower = address.toLowerCase();
  const dotted = /^(?:::ffff:|::|64:ff9b::)(\d+\.\d+\.\d+\.\d+)$/.exec(lower);
  if (dotted && net.isIPv4(dotted[1])) return dotted[1];
  const hex = /^(?:::ffff:|64:ff9b::)([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(lower);
  if (hex) {
    const high = parseInt(hex[1], 16);
    const low = parseInt(hex[2], 16);
    return [high >> 8, high & 255, low >> 8, low & 255].join('.');
  }
  return null;
}

/** What kind of non-public address `address` is ('a loopback address' ...), or null for a public one. */
export function nonPublicKind(address: string): string | null {
  const family = net.isIPv6(address) ? 'ipv6' : net.isIPv4(address) ? 'ipv4' : null;
  if (!family) return 'not an IP address';
  if (family === 'ipv6') {
    const v4 = embeddedIpv4(address);
    if (v4) return nonPublicKind(v4);
  }
  for (const { list, kind, family: rangeFamily } of blockLists) if (rangeFamily === family && list.check(address, family)) return kind;
  return null;
}

const LOOPBACK_NAMES = new Set(['localhost', '127.0.0.1', '[::1]']);

/** Whether the URL names a loopback address literally (what plain http is allowed to outside production). */
function namesLoopback(url: URL): boolean {
  const host = url.hostname.toLowerCase();
  return LOOPBACK_NAMES.has(host) || (net.isIPv4(host) && nonPublicKind(host) === 'a loopback address');
}

const systemResolver: HostResolver = async (hostname) => {
  const found = await lookup(hostname, { all: true, verbatim: true });
  return found.filter((a) => a.family === 4 || a.family === 6).map((a) => ({ address: a.address, family: a.family as 4 | 6 }));
};

/** The URL's form alone (scheme, credentials, http only to loopback outside production), before any DNS look-up. */
export function checkWebhookUrl(raw: string, policy: WebhookTargetPolicy): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new WebhookTargetError(WEBHOOK_TARGET_CODES.invalid, 'Enter a full URL starting with https://, for example https://example.com/webhooks.');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new WebhookTargetError(WEBHOOK_TARGET_CODES.invalid, 'Enter a full URL starting with https://, for example https://example.com/webhooks.');
  }
  if (!url.hostname) throw new WebhookTargetError(WEBHOOK_TARGET_CODES.invalid, 'The URL has no host name. Enter a URL like https://example.com/webhooks.');
  if (url.username || url.password) {
    throw new WebhookTargetError(WEBHOOK_TARGET_CODES.credentials, 'The URL must not contain a user name or password. Use the signing secret to check that a delivery is ours.');
  }
  if (url.protocol === 'http:') {
    const production = policy.nodeEnv === 'production';
    if (production || !namesLoopback(url)) {
      throw new WebhookTargetError(
        WEBHOOK_TARGET_CODES.notHttps,
        production
          ? 'Webhook URLs must use https://.'
          : 'Webhook URLs must use https:// (plain http:// is allowed only to localhost, 127.0.0.1 or [::1] while developing).',
      );
    }
  }
  return url;
}

/**
 * The URL and the address to send to, or WebhookTargetError saying why webhooks may not go there. Every address the
 * host name resolves to is checked (a name with one private address among public ones is refused: which one a
 * client picks is not ours to know).
 */
export async function resolveWebhookTarget(raw: string, policy: WebhookTargetPolicy, resolve: HostResolver = systemResolver): Promise<ResolvedWebhookTarget> {
  const url = checkWebhookUrl(raw, policy);
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  // a loopback literal while developing: the one private target allowed without the operator's setting
  const developmentLoopback = policy.nodeEnv !== 'production' && namesLoopback(url);
  let addresses: ResolvedAddress[];
  if (net.isIP(host)) addresses = [{ address: host, family: net.isIPv6(host) ? 6 : 4 }];
  // RFC 6761: localhost is loopback whatever a resolver says
  else if (host.toLowerCase() === 'localhost' || host.toLowerCase().endsWith('.localhost')) addresses = [{ address: '127.0.0.1', family: 4 }];
  else {
    try {
      addresses = await resolve(host);
    } catch {
      addresses = [];
    }
    if (addresses.length === 0) {
      throw new WebhookTargetError(WEBHOOK_TARGET_CODES.unresolvable, `The host name ${host} could not be found. Check the URL for typos.`);
    }
  }
  if (!policy.allowPrivateTargets && !developmentLoopback) {
    for (const { address } of addresses) {
      const kind = nonPublicKind(address);
      if (kind) {
        const what = net.isIP(host) ? `${host} is ${kind}` : `${host} resolves to ${address}, ${kind}`;
        throw new WebhookTargetError(WEBHOOK_TARGET_CODES.private, `Webhooks can only be sent to public addresses: ${what}.`);
      }
    }
  }
  return { url, address: addresses[0].address, family: addresses[0].family };
}
