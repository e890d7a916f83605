import { api } from './client';

export type UserRole = 'user' | 'admin';

export interface User {
  id: string;
  email: string;
  name: string;
  role: UserRole;
  /** until verified: no invitations, no e-mail but the verification (the dashboard shows a banner) */
  emailVerified: boolean;
  createdAt: string;
}

export interface SignUpInput {
  name: string;
  email: string;
  password: string;
}

export interface SignInInput {
  email: string;
  password: string;
}

interface SessionResponse {
  success: true;
  token: string;
  user: User;
}

export async function signUp(input: SignUpInput): Promise<User> {
  const body = await api.post('auth/signup', { json: input }).json<SessionResponse>();
  return body.user;
}

/** The account has two-factor sign-in: no session yet, the second step names this sign-in by its token. */
export interface SecondStepNeeded {
  secondFactorRequired: true;
  pendingToken: string;
  methods: Array<'totp' | 'recovery' | 'passkey'>;
}

/** Signed in (the user), or the second step is needed. */
export async function signIn(input: SignInInput): Promise<User | SecondStepNeeded> {
  const body = await api.post('auth/signin', { json: input }).json<SessionResponse | (SecondStepNeeded & { success: true })>();
  return 'secondFactorRequired' in body ? body : body.user;
}

export async function signOut(): Promise<void> {
  await api.post('auth/signout');
}

/**
 * The signed-in user, or null when there is no valid session. GET /api/auth/session answers a signed-out visitor
 * with user null rather than a 401, so the landing page's first request leaves no error in the console. Other
 * failures throw.
 */
export async function fetchCurrentUser(): Promise<User | null> {
  const body = await api.get('auth/session', { retry: 0 }).json<{ success: true; user: User | null }>();
  return body.user;
}
