/** The part of npm's `oidc-provider` (which ships no types) the tests use: tests/support/oidcProvider.ts. */
declare module 'oidc-provider' {
  import type { IncomingMessage, ServerResponse } from 'node:http';

  export interface OidcAccount {
    accountId: string;
    claims: (use: string, scope: string) => Promise<Record<string, unknown>>;
  }

  export interface OidcProviderConfiguration {
    clients: Array<Record<string, unknown>>;
    jwks: { keys: Array<Record<string, unknown>> };
    findAccount: (ctx: unknown, id: string) => Promise<OidcAccount | undefined>;
    claims?: Record<string, string[]>;
    cookies?: { keys: string[] };
    features?: Record<string, { enabled: boolean }>;
    conformIdTokenClaims?: boolean;
    pkce?: { required: () => boolean };
    ttl?: Record<string, number>;
  }

  export default class Provider {
    constructor(issuer: string, configuration: OidcProviderConfiguration);
    callback(): (req: IncomingMessage, res: ServerResponse) => void;
    on(event: string, listener: (...args: unknown[]) => void): this;
  }
}
