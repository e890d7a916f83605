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
