/**
 * A real OpenID Connect provider for the single sign-on tests: npm's `oidc-provider` with its own signing key, one
 * confidential client registered with the app's redirect URI, and users whose claims the test sets (e-mail and
 * whether the provider verified it). Its development interactions (a login form that accepts any password, then a
 * consent form) are driven over plain HTTP by `authorizeAtProvider`, or by Chromium in the browser test.
 */
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type ProviderClass from 'oidc-provider';

/**
 * The warnings oidc-provider prints for what these tests choose on purpose: Node 20 (it asks for 22), its in-memory
 * adapter and its development login and consent forms. They are left out, so the test run prints jest's results
 * only; any other warning still shows.
 */
const KNOWN_WARNINGS = [/^oidc-provider WARNING: Unsupported runtime/, /^oidc-provider WARNING: a quick start development-only (in-memory adapter|feature devInteractions)/];

function withoutKnownWarnings<T>(fn: () => T): T {
  const warn = console.warn;
  console.warn = (...args: unknown[]) => {
    if (!KNOWN_WARNINGS.some((known) => known.test(String(args[0])))) warn(...args);
  };
  try {
    return fn();
  } finally {
    console.warn = warn;
  }
}

/** npm's `oidc-provider`, loaded when a test first starts one (it warns on import). */
function loadProvider(): typeof ProviderClass {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return withoutKnownWarnings(() => (require('oidc-provider') as { default: typeof ProviderClass }).default);
}

export interface ProviderUser {
  email?: string;
  email_verified?: boolean;
  name?: string;
}

export interface TestOidcProvider {
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** Adds (or replaces) a person at the provider; their login name is their subject. */
  addUser: (subject: string, claims: ProviderUser) => void;
  /** Registers the app's redirect URI when it is known only after the provider started (the browser test's port). */
  registerRedirectUri: (redirectUri: string) => void;
  close: () => Promise<void>;
}

export async function startOidcProvider(options: { redirectUri?: string } = {}): Promise<TestOidcProvider> {
  const users = new Map<string, ProviderUser>();
  let handler: ((req: IncomingMessage, res: ServerResponse) => void) | null = null;
  const server = http.createServer((req, res) => {
    if (handler) handler(req, res);
    else res.writeHead(503).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const clientId = `render-studio-${randomBytes(4).toString('hex')}`;
  const clientSecret = randomBytes(32).toString('base64url');
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const jwk = { ...(privateKey.export({ format: 'jwk' }) as Record<string, unknown>), kid: 'test-key', alg: 'RS256', use: 'sig' };

  const Provider = loadProvider();
  const build = (redirectUri: string) =>
    withoutKnownWarnings(
      () =>
        new Provider(issuer, {
          clients: [
            {
              client_id: clientId,
              client_secret: clientSecret,
              redirect_uris: [redirectUri],
              grant_types: ['authorization_code'],
              response_types: ['code'],
              token_endpoint_auth_method: 'client_secret_basic',
            },
          ],
          jwks: { keys: [jwk] },
          findAccount: async (_ctx, id) => {
            const user = users.get(id);
            if (!user) return undefined;
            return { accountId: id, claims: async () => ({ sub: id, ...user }) };
          },
          claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'] },
          cookies: { keys: [randomBytes(32).toString('hex')] },
          features: { devInteractions: { enabled: true } },
          // the ID token carries the e-mail claims even though an access token is issued too
          conformIdTokenClaims: false,
          pkce: { required: () => true },
          ttl: { Interaction: 600, Session: 3600, Grant: 3600, AccessToken: 600, IdToken: 600, AuthorizationCode: 60 },
        }),
    );
  if (options.redirectUri) handler = build(options.redirectUri).callback();

  return {
    issuer,
    clientId,
    clientSecret,
    addUser: (subject, claims) => users.set(subject, claims),
    registerRedirectUri: (redirectUri) => {
      handler = build(redirectUri).callback();
    },
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((err) => (err ? reject(err) : resolve()));
      }),
  };
}

/** A cookie jar of one browser at the provider (names only: the provider's cookies do not collide across paths here). */
class CookieJar {
  private readonly cookies = new Map<string, string>();

  store(res: Response): void {
    for (const line of res.headers.getSetCookie()) {
      const [pair, ...attributes] = line.split(';');
      const eq = pair.indexOf('=');
      const name = pair.slice(0, eq).trim();
      const value = pair.slice(eq + 1).trim();
      const expired = attributes.some((a) => /^\s*expires=.*1970/i.test(a) || /^\s*max-age=0\s*$/i.test(a));
      if (expired || value === '') this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }

  header(): string {
    return [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
  }
}

/**
 * Follows an authorization URL through the provider's login and consent as `login` would in a browser, and answers
 * the redirect back to the app (the redirect URI with `code` and `state`, or `error`) without following it.
 * `abort`: the person cancels at the login form instead (the provider answers `error=access_denied`).
 */
export async function authorizeAtProvider(authorizationUrl: string, redirectUri: string, login: string, options: { abort?: boolean } = {}): Promise<URL> {
  const jar = new CookieJar();
  let next: { url: URL; form?: URLSearchParams } = { url: new URL(authorizationUrl) };
  for (let step = 0; step < 20; step += 1) {
    const res = await fetch(next.url, {
      method: next.form ? 'POST' : 'GET',
      redirect: 'manual',
      headers: { cookie: jar.header(), ...(next.form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}) },
      body: next.form?.toString(),
    });
    jar.store(res);
    const location = res.headers.get('location');
    if (res.status >= 300 && res.status < 400 && location) {
      const target = new URL(location, next.url);
      if (target.href.startsWith(redirectUri)) return target;
      next = { url: target };
      continue;
    }
    const html = await res.text();
    if (res.status !== 200) throw new Error(`the provider answered ${res.status} at ${next.url.pathname}: ${html.slice(0, 300)}`);
    const action = /<form[^>]*action="([^"]+)"/.exec(html)?.[1];
    const prompt = /name="prompt" value="(login|consent)"/.exec(html)?.[1];
    if (!action || !prompt) throw new Error(`no login or consent form at ${next.url.pathname}`);
    const formUrl = new URL(action.replace(/&amp;/g, '&'), next.url);
    if (prompt === 'login' && options.abort) {
      next = { url: new URL(`${formUrl.pathname}/abort`, formUrl) };
      continue;
    }
    next = { url: formUrl, form: new URLSearchParams(prompt === 'login' ? { prompt, login, password: 'any' } : { prompt }) };
  }
  throw new Error('the provider did not redirect back within 20 steps');
}
