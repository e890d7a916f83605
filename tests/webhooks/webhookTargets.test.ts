/**
 * The address check behind every webhook registration and send (services/integrations/webhookTargets.ts): which
 * addresses count as public, including the IPv6 forms that carry or tunnel an IPv4 address (issue 41, item 5: an
 * audit registered `https://[::127.0.0.1]/` and four other such forms in production), and the endpoint form's hint,
 * which says what the check accepts (issue 41, item 4: it said https:// only while http:// to localhost was accepted).
 */
import { webhookUrlHint } from '../../domain/webhookEndpoints';
import {
  nonPublicKind,
  resolveWebhookTarget,
  webhookTargetRule,
  WEBHOOK_TARGET_CODES,
  type WebhookTargetPolicy,
} from '../../services/integrations/webhookTargets';

const production: WebhookTargetPolicy = { nodeEnv: 'production', allowPrivateTargets: false };
const noDns = async () => {
  throw new Error('an IP literal needs no look-up');
};

describe('nonPublicKind', () => {
  it.each([
    // IPv4
    ['127.0.0.1', 'a loopback address'],
    ['10.1.2.3', 'a private network address'],
    ['172.31.0.1', 'a private network address'],
    ['192.168.1.1', 'a private network address'],
    ['169.254.169.254', 'a link-local address'],
    ['100.64.0.9', 'a carrier-grade NAT address'],
    ['0.0.0.0', 'a reserved address'],
    ['192.0.2.10', 'a reserved address'],
    ['198.18.0.1', 'a reserved address'],
    ['240.0.0.1', 'a reserved address'],
    ['224.0.0.1', 'a multicast address'],
    ['255.255.255.255', 'a broadcast address'],
    // IPv6 of its own
    ['::1', 'a loopback address'],
    ['::', 'a reserved address'],
    ['fe80::1', 'a link-local address'],
    ['fc00::7', 'a unique-local (private network) address'],
    ['fec0::1', 'a reserved address'],
    ['ff02::1', 'a multicast address'],
    ['2001:db8::1', 'a reserved address'],
    ['100::1', 'a reserved address'],
    ['2001:100::1', 'a reserved address'],
    ['64:ff9b:1::808:808', 'a reserved address'],
    // IPv6 forms that carry an IPv4 address: judged by it
    ['::ffff:127.0.0.1', 'a loopback address'],
    ['::ffff:7f00:1', 'a loopback address'],
    ['::127.0.0.1', 'a loopback address'],
    ['::7f00:1', 'a loopback address'],
    ['::169.254.169.254', 'a link-local address'],
    ['::a9fe:a9fe', 'a link-local address'],
    ['::ffff:0:127.0.0.1', 'a loopback address'],
    ['::ffff:0:a00:1', 'a private network address'],
    ['64:ff9b::7f00:1', 'a loopback address'],
    ['64:ff9b::10.0.0.1', 'a private network address'],
    ['2002:7f00:1::', 'a loopback address'],
    ['2002:a9fe:a9fe::', 'a link-local address'],
    // tunnels to somewhere public: still refused
    ['2002:808:808::1', 'a 6to4 tunnel address'],
    ['2001:0:4136:e378:8000:63bf:3fff:fdd2', 'a Teredo tunnel address'],
    // not addresses
    ['example.com', 'not an IP address'],
    ['0x7f.1', 'not an IP address'],
  ])('%s is %s', (address, kind) => {
    expect(nonPublicKind(address)).toBe(kind);
  });

  it.each(['93.184.215.14', '8.8.8.8', '2606:2800:21f:cb07:6820:80da:af6b:8b2c', '2001:4860:4860::8888', '::ffff:8.8.8.8', '::ffff:0:808:808', '64:ff9b::8.8.8.8', '::8.8.8.8'])(
    '%s is public',
    (address) => {
      expect(nonPublicKind(address)).toBeNull();
    },
  );
});

describe('resolveWebhookTarget in production', () => {
  it.each([
    ['https://[::127.0.0.1]/', '::7f00:1 is a loopback address'],
    ['https://[::169.254.169.254]/', '::a9fe:a9fe is a link-local address'],
    ['https://[::ffff:0:127.0.0.1]/', '::ffff:0:7f00:1 is a loopback address'],
    ['https://[2002:7f00:1::]/', '2002:7f00:1:: is a loopback address'],
    ['https://[2002:a9fe:a9fe::]/', '2002:a9fe:a9fe:: is a link-local address'],
    ['https://[64:ff9b::a9fe:a9fe]/latest/meta-data', '64:ff9b::a9fe:a9fe is a link-local address'],
  ])('refuses %s', async (url, what) => {
    await expect(resolveWebhookTarget(url, production, noDns)).rejects.toMatchObject({
      code: WEBHOOK_TARGET_CODES.private,
      message: `Webhooks can only be sent to public addresses: ${what}.`,
    });
  });

  it('refuses a name that resolves to one of those forms, and sends to a public one', async () => {
    const resolver = async (host: string) => (host === 'sneaky.example.test' ? [{ address: '::ffff:0:a9fe:a9fe', family: 6 as const }] : [{ address: '2001:4860:4860::8888', family: 6 as const }]);
    await expect(resolveWebhookTarget('https://sneaky.example.test/x', production, resolver)).rejects.toMatchObject({
      message: 'Webhooks can only be sent to public addresses: sneaky.example.test resolves to ::ffff:0:a9fe:a9fe, a link-local address.',
    });
    await expect(resolveWebhookTarget('https://public.example.test/x', production, resolver)).resolves.toMatchObject({ address: '2001:4860:4860::8888', family: 6 });
  });
});

describe('the endpoint form hint (webhookUrlHint of webhookTargetRule)', () => {
  const accepts = async (url: string, policy: WebhookTargetPolicy): Promise<boolean> =>
    resolveWebhookTarget(url, policy, async () => [{ address: '10.0.0.7', family: 4 }]).then(
      () => true,
      () => false,
    );

  it.each([
    [{ nodeEnv: 'production', allowPrivateTargets: false }, 'A public https:// address your receiver answers on.'],
    [{ nodeEnv: 'production', allowPrivateTargets: true }, 'An https:// address your receiver answers on. Private network addresses are allowed on this server.'],
    [{ nodeEnv: 'development', allowPrivateTargets: false }, 'A public https:// address your receiver answers on or, while developing, http:// to localhost, 127.0.0.1 or [::1].'],
    [
      { nodeEnv: 'test', allowPrivateTargets: true },
      'An https:// address your receiver answers on or, while developing, http:// to localhost, 127.0.0.1 or [::1]. Private network addresses are allowed on this server.',
    ],
  ] as Array<[WebhookTargetPolicy, string]>)('%o: "%s", and the check accepts what it says', async (policy, hint) => {
    expect(webhookUrlHint(webhookTargetRule(policy))).toBe(hint);
    const saysLoopbackHttp = hint.includes('http:// to localhost, 127.0.0.1 or [::1]');
    for (const url of ['http://localhost:8080/hooks', 'http://127.0.0.1/hooks', 'http://[::1]/hooks']) expect(await accepts(url, policy)).toBe(saysLoopbackHttp);
    // http:// anywhere else is never accepted
    expect(await accepts('http://example.com/hooks', policy)).toBe(false);
    const saysPrivate = hint.includes('Private network addresses are allowed');
    expect(await accepts('https://intranet.example/hooks', policy)).toBe(saysPrivate);
    expect(await accepts('https://10.0.0.7/hooks', policy)).toBe(saysPrivate);
    expect(hint.startsWith('A public https://')).toBe(!saysPrivate);
  });
});
