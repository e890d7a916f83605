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
 *   service), unique-local, CGNAT, multicast, documentation and reserved ranges are refused, and so is an IPv6 form
 *   that carries such an IPv4 address (mapped, translated, compatible, NAT64, 6to4) or tunnels (6to4, Teredo); the
 *   ranges are ipaddr.js's. The operator may allow private targets (WEBHOOK_ALLOW_PRIVATE_TARGETS=on). A loopback
 *   literal outside production is the one exception above.
 *
 * The messages are the user's: they say what is wrong with the URL and what to do.
 */
import { lookup } from 'node:dns/promises';
import net from 'node:net';
import ipaddr from 'ipaddr.js';
import type { AppConfig } from '../../config/env';
import type { WebhookTargetRule } from '../../domain/webhookEndpoints';

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

/** The rule below as the endpoint form states it (domain/webhookEndpoints.ts webhookUrlHint). */
export function webhookTargetRule(policy: WebhookTargetPolicy): WebhookTargetRule {
  return { loopback: policy.nodeEnv !== 'production', privateAddresses: policy.allowPrivateTargets };
}

/** The words a refusal uses for each of ipaddr.js's ranges; a range not named here is 'a reserved address'. */
const RANGE_WORDS: Readonly<Record<string, string>> = {
  private: 'a private network address',
  loopback: 'a loopback address',
  linkLocal: 'a link-local address',
  carrierGradeNat: 'a carrier-grade NAT address',
  multicast: 'a multicast address',
  broadcast: 'a broadcast address',
  uniqueLocal: 'a unique-local (private network) address',
  teredo: 'a Teredo tunnel address',
};

/** NAT64's well-known prefix (RFC 6052): its last 32 bits are the IPv4 address a translator connects to. */
const NAT64_WELL_KNOWN = ipaddr.parseCIDR('64:ff9b::/96');

/**
 * The IPv4 address an IPv6 address stands for, which is where a connection to it really goes: IPv4-mapped
 * (`::ffff:a.b.c.d`), IPv4-translated (`::ffff:0:a.b.c.d`), IPv4-compatible (`::a.b.c.d`, deprecated but still
 * routed by some stacks), NAT64 (`64:ff9b::a.b.c.d`) and 6to4 (`2002:AABB:CCDD::`); null for other addresses.
 */
function carriedIpv4(address: ipaddr.IPv6): ipaddr.IPv4 | null {
  const bytes = address.toByteArray();
  const lastFour = () => new ipaddr.IPv4(bytes.slice(12, 16));
  const range = address.range();
  if (range === 'ipv4Mapped' || range === 'rfc6145') return lastFour();
  if (range === 'rfc6052') return address.match(NAT64_WELL_KNOWN) ? lastFour() : null;
  if (range === '6to4') return new ipaddr.IPv4(bytes.slice(2, 6));
  // ::/96 other than :: and ::1 (ipaddr.js reads `::a.b.c.d` as mapped, and `::7f00:1` as unicast)
  if (bytes.slice(0, 12).every((b) => b === 0) && !(bytes[12] === 0 && bytes[13] === 0 && bytes[14] === 0 && bytes[15] <= 1)) return lastFour();
  return null;
}

/**
 * What kind of non-public address `address` is ('a loopback address' ...), or null for a public one. The ranges are
 * ipaddr.js's (IANA's special-purpose registries): only its `unicast` is public. An IPv6 form that carries an IPv4
 * address is judged by that address; a 6to4 address of a public one is refused all the same (6to4 is deprecated,
 * RFC 7526, and which relay carries it is not ours to know), and so is Teredo.
 */
export function nonPublicKind(address: string): string | null {
  if (!net.isIP(address)) return 'not an IP address';
  const parsed = ipaddr.parse(address);
  if (parsed.kind() === 'ipv6') {
    const v6 = parsed as ipaddr.IPv6;
    const carried = carriedIpv4(v6);
    if (carried) return nonPublicKind(carried.toString()) ?? (v6.range() === '6to4' ? 'a 6to4 tunnel address' : null);
  }
  const range = parsed.range();
  return range === 'unicast' ? null : (RANGE_WORDS[range] ?? 'a reserved address');
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
