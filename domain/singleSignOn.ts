/** Texts and limits of single sign-on with OpenID Connect (services/accounts/singleSignOn.ts, the sign-in page). */

/** How long a "Sign in with ..." click may take at the provider before its state expires. */
export const SSO_ATTEMPT_TTL_MS = 10 * 60_000;

export const SSO_MSG = {
  notConfigured: 'Single sign-on is not set up here',
  stateInvalid: 'This sign-in did not start in this browser, or it took too long: please start again from the sign-in page',
  alreadyUsed: 'This sign-in was already completed: please start again from the sign-in page',
  providerRefused: 'The identity provider did not sign you in',
  codeRejected: 'The identity provider did not accept this sign-in: please start again from the sign-in page',
  idTokenInvalid: "The identity provider's answer could not be verified: please start again from the sign-in page",
  noEmail: 'The identity provider did not share an e-mail address, which an account here needs',
  linkRefused:
    'An account with this e-mail already exists. It is joined to single sign-on only when both the identity provider and this app have verified the address: sign in with your password, verify your e-mail, then try again.',
  accountClosed: 'This account is being deleted and cannot be signed in to',
  providerUnreachable: 'The identity provider cannot be reached right now; please try again shortly',
} as const;

export const SSO_CODES = {
  notConfigured: 'SSO_NOT_CONFIGURED',
  stateInvalid: 'SSO_STATE_INVALID',
  alreadyUsed: 'SSO_ALREADY_USED',
  providerRefused: 'SSO_PROVIDER_ERROR',
  codeRejected: 'SSO_CODE_REJECTED',
  idTokenInvalid: 'SSO_ID_TOKEN_INVALID',
  noEmail: 'SSO_NO_EMAIL',
  linkRefused: 'SSO_LINK_REFUSED',
  accountClosed: 'SSO_ACCOUNT_CLOSED',
  providerUnreachable: 'SSO_PROVIDER_UNREACHABLE',
} as const;

/** What the sign-in page lists: one button per provider. */
export interface SsoProviderSummary {
  id: string;
  name: string;
}

// ---- a workspace's own provider (services/workspaces/workspaceSingleSignOn.ts) ----

/** The most e-mail domains one workspace's provider may claim. */
export const MAX_SSO_DOMAINS = 20;

/**
 * Mail services anyone can get an address at: no workspace may claim them (their addresses are not the workspace's
 * people). A short list of the largest; an operator with another in mind refuses it by not letting it be claimed.
 */
export const PUBLIC_MAIL_DOMAINS: readonly string[] = [
  'gmail.com', 'googlemail.com', 'outlook.com', 'hotmail.com', 'live.com', 'msn.com', 'yahoo.com', 'ymail.com',
  'icloud.com', 'me.com', 'mac.com', 'aol.com', 'proton.me', 'protonmail.com', 'pm.me', 'gmx.com', 'gmx.de', 'gmx.net',
  'web.de', 'mail.com', 'yandex.ru', 'yandex.com', 'mail.ru', 'qq.com', '163.com', '126.com', 'zoho.com',
  'fastmail.com', 'hey.com', 'tutanota.com', 'example.com',
];

export const WORKSPACE_SSO_MSG = {
  notSetUp: 'Single sign-on is not set up for this workspace',
  personalWorkspace: 'A personal workspace has no single sign-on of its own: set it up in a team workspace',
  issuerInvalid: 'Enter the issuer as a full URL starting with https://, for example https://login.example.com',
  issuerUnreachable: (issuer: string) => `Could not read the OpenID configuration at ${issuer}/.well-known/openid-configuration. Check the issuer URL.`,
  issuerNotProvider: (issuer: string) => `${issuer} did not answer with a valid OpenID configuration for this issuer. Check the issuer URL.`,
  clientIdRequired: 'Enter the client ID the identity provider gave you',
  clientSecretRequired: 'Enter the client secret the identity provider gave you',
  nameRequired: 'Enter the name the sign-in button shows, for example Acme Okta',
  domainsRequired: 'Enter at least one e-mail domain, for example acme.com',
  domainInvalid: (domain: string) => `"${domain}" is not an e-mail domain: enter it like acme.com, without @ or spaces`,
  tooManyDomains: `Enter at most ${MAX_SSO_DOMAINS} e-mail domains`,
  publicDomain: (domain: string) => `${domain} is a public mail service: anyone can have an address there, so no workspace can claim it`,
  domainTaken: (domain: string) => `${domain} is already claimed by another workspace`,
  domainNotYours: (domain: string) =>
    `You can claim ${domain} only with a verified e-mail address at ${domain} yourself: change your account's e-mail, verify it, then try again`,
  noProviderForEmail: "This e-mail address's domain has no single sign-on: sign in with your password",
  emailInvalid: 'Enter your work e-mail address',
  ssoRequired: (workspaceName: string, providerName: string) =>
    `${workspaceName} requires single sign-on for this e-mail address: use "Sign in with ${providerName}" instead of a password.`,
  ssoRequiredReset: (workspaceName: string, providerName: string) =>
    `${workspaceName} requires single sign-on for this e-mail address: use "Sign in with ${providerName}". Owners of ${workspaceName} get a reset link by e-mail if they have an account.`,
  adminNeedsSso: (providerName: string) =>
    `Requiring single sign-on would sign you out, as your address is at one of these domains: sign in with "${providerName}" first (or ask an owner, who keeps their password)`,
  emailOutsideDomains: (providerName: string) => `${providerName} signed you in with an e-mail address outside the domains it is set up for here`,
} as const;

export const WORKSPACE_SSO_CODES = {
  notSetUp: 'WORKSPACE_SSO_NOT_SET_UP',
  personalWorkspace: 'PERSONAL_WORKSPACE',
  issuerInvalid: 'SSO_ISSUER_INVALID',
  issuerUnreachable: 'SSO_ISSUER_UNREACHABLE',
  clientInvalid: 'SSO_SETTINGS_INVALID',
  domainInvalid: 'SSO_DOMAIN_INVALID',
  publicDomain: 'SSO_DOMAIN_PUBLIC',
  domainTaken: 'SSO_DOMAIN_TAKEN',
  domainNotYours: 'SSO_DOMAIN_NOT_YOURS',
  noProviderForEmail: 'SSO_NO_PROVIDER_FOR_EMAIL',
  ssoRequired: 'SSO_REQUIRED',
  emailOutsideDomains: 'SSO_EMAIL_OUTSIDE_DOMAINS',
  adminNeedsSso: 'SSO_SIGN_IN_FIRST',
} as const;

/** A workspace's single sign-on as its admins see it: never the client secret, only that one is set. */
export interface WorkspaceSsoSettings {
  issuerUrl: string;
  clientId: string;
  clientSecretSet: true;
  displayName: string;
  domains: string[];
  ssoRequired: boolean;
  /** the redirect URI to register at the identity provider */
  redirectUri: string;
  updatedAt: string;
}

/** What the sign-in page learns from an e-mail address: the button to show, and whether a password is refused. */
export interface SsoLookup {
  provider: SsoProviderSummary | null;
  ssoRequired: boolean;
}

/** "acme.com": lower case, dot-separated labels of letters, digits and hyphens, a letter TLD. */
export const EMAIL_DOMAIN_PATTERN = /^(?=.{3,253}$)(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/;

export function emailDomainOf(email: string): string {
  return email.slice(email.lastIndexOf('@') + 1).trim().toLowerCase();
}
