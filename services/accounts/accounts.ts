import type { Knex } from 'knex';
import { UniqueViolationError } from 'objection';
import { Profile } from '../../db/models/Profile';
import { User, type UserRole } from '../../db/models/User';
import { NEW_PROFILE_CREDITS } from '../../domain/constants';
import { DomainError } from '../../domain/errors';
import { MSG } from '../../domain/messages';
import { isStrongPassword } from '../../domain/passwordStrength';
import { addCredits } from '../billing/credits';
import { hashPassword, verifyAgainstDecoy, verifyPassword } from './passwords';
import { createSession, deleteExpiredSessions, endOtherSessions, type AuthenticatedWith, type IssuedSession, type SessionDevice } from './sessions';
import { createPersonalWorkspace } from '../workspaces/personalWorkspace';
import { refuseWhereSsoRequired } from '../workspaces/workspaceSingleSignOn';
import { hasSecondFactor, startPendingSignIn, type IssuedPendingSignIn } from './pendingSignIns';

type Db = Knex | Knex.Transaction;

export const ACCOUNT_MSG = {
  emailTaken: 'An account with this email already exists',
  invalidCredentials: 'Invalid email or password',
  currentPasswordIncorrect: 'Current password is incorrect',
  nameTooLong: 'Name must be 100 characters or fewer',
  profileNotFound: 'Profile not found',
} as const;

export const NAME_MAX_LENGTH = 100;

export class EmailTakenError extends DomainError {
  constructor() {
    super(409, 'EMAIL_TAKEN', ACCOUNT_MSG.emailTaken);
  }
}

/** The same answer for an unknown e-mail and a wrong password. */
export class InvalidCredentialsError extends DomainError {
  constructor() {
    super(401, 'INVALID_CREDENTIALS', ACCOUNT_MSG.invalidCredentials);
  }
}

export interface Account {
  id: string;
  email: string;
  name: string;
  role: UserRole;
  /** whether the e-mail is verified (until then: no invitations, no e-mail but the verification) */
  emailVerified: boolean;
  createdAt: Date;
}

export interface ProfileView {
  id: string;
  name: string;
  email: string;
  createdAt: Date;
}

export interface SignedIn {
  user: Account;
  session: IssuedSession;
}

/** A right password of an account with two-factor sign-in: no session yet, a pending sign-in for its second step. */
export interface SecondStepNeeded {
  user: Account;
  secondStep: IssuedPendingSignIn;
}

export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}

function checkName(raw: string, { allowEmpty }: { allowEmpty: boolean }): string {
  const name = raw.trim();
  if (!name && !allowEmpty) throw new DomainError(400, 'NAME_EMPTY', MSG.nameEmpty);
  if (name.length > NAME_MAX_LENGTH) throw new DomainError(400, 'NAME_TOO_LONG', ACCOUNT_MSG.nameTooLong);
  return name;
}

export function checkNewPassword(password: string): void {
  if (!isStrongPassword(password)) throw new DomainError(400, 'WEAK_PASSWORD', MSG.passwordRequirements);
}

function toAccount(user: User, name: string): Account {
  return { id: user.id, email: user.email, name, role: user.role, emailVerified: user.emailVerifiedAt !== null && user.emailVerifiedAt !== undefined, createdAt: user.createdAt };
}

/**
 * Creates the user, the profile (with its free starting credits as a ledger entry) and a first session,
 * all in one transaction: a failure leaves nothing behind.
 */
export async function signUp(
  knex: Knex,
  input: { name?: string; email: string; password: string },
  options: { sessionTtlDays: number; device?: SessionDevice },
): Promise<SignedIn> {
  const name = checkName(input.name ?? '', { allowEmpty: true });
  const email = normalizeEmail(input.email);
  checkNewPassword(input.password);
  const passwordHash = await hashPassword(input.password);
  try {
    return await knex.transaction(async (trx) => {
      const user = await insertAccount(trx, { email, passwordHash, name, emailVerifiedAt: null });
      const session = await createSession(trx, user.id, options.sessionTtlDays, { ...options.device, authenticatedWith: 'sign_up' });
      return { user: toAccount(user, name), session };
    });
  } catch (err) {
    if (err instanceof UniqueViolationError && err.constraint === 'users_email_unique') throw new EmailTakenError();
    throw err;
  }
}

/**
 * The user, their personal workspace and its free starting credits, in the caller's transaction (sign-up, and the
 * first single sign-on of a new address). `email` is normalized already.
 */
export async function insertAccount(
  trx: Knex.Transaction,
  input: { email: string; passwordHash: string; name: string; emailVerifiedAt: Date | null },
): Promise<User> {
  const { email, passwordHash, name, emailVerifiedAt } = input;
  const user = await User.query(trx).insert({ email, passwordHash, emailVerifiedAt }).returning('*');
  await createPersonalWorkspace(trx, { id: user.id, email, name });
  await addCredits(trx, {
    workspaceId: user.id,
    amount: NEW_PROFILE_CREDITS,
    type: 'signup_bonus',
    description: 'Free starting credits',
    idempotencyKey: `signup:${user.id}`,
    // the new user is the actor of their bonus row (each ledger row records who acted, DESIGN.md "Teams")
    actorId: user.id,
  });
  return user;
}

export async function signIn(
  knex: Knex,
  input: { email: string; password: string },
  options: { sessionTtlDays: number; device?: SessionDevice },
): Promise<SignedIn | SecondStepNeeded> {
  const user = await User.query(knex).findOne('email', normalizeEmail(input.email)).withGraphFetched('profile');
  if (!user) {
    await verifyAgainstDecoy(input.password);
    throw new InvalidCredentialsError();
  }
  if (!(await verifyPassword(input.password, user.passwordHash))) throw new InvalidCredentialsError();
  // an account being deleted (services/accounts/accountData.ts) takes no new session
  if (user.deletionRequestedAt) throw new InvalidCredentialsError();
  // a workspace that requires single sign-on for this address's domain takes no password (its owners excepted)
  await refuseWhereSsoRequired(knex, user);
  // two-factor sign-in: no session until the second step (services/accounts/secondFactor.ts)
  if (await hasSecondFactor(knex, user.id)) {
    await deleteExpiredSessions(knex, user.id);
    return { user: toAccount(user, user.profile?.name ?? ''), secondStep: await startPendingSignIn(knex, user.id, options.device ?? {}) };
  }
  return startSignedInSession(knex, user, options, 'password');
}

/**
 * The session of an account whose owner has just proven who they are (a password without a second factor, or single
 * sign-on): these sign-ins open their session here.
 */
export async function startSignedInSession(
  db: Db,
  user: User,
  options: { sessionTtlDays: number; device?: SessionDevice },
  authenticatedWith: AuthenticatedWith,
): Promise<SignedIn> {
  await deleteExpiredSessions(db, user.id);
  const session = await createSession(db, user.id, options.sessionTtlDays, { ...options.device, authenticatedWith });
  return { user: toAccount(user, user.profile?.name ?? ''), session };
}

export async function getAccount(db: Db, userId: string): Promise<Account> {
  const user = await User.query(db).findById(userId).withGraphFetched('profile');
  if (!user) throw new DomainError(404, 'ACCOUNT_NOT_FOUND', 'Account not found');
  return toAccount(user, user.profile?.name ?? '');
}

function toProfileView(profile: Profile): ProfileView {
  return { id: profile.id, name: profile.name, email: profile.email, createdAt: profile.createdAt };
}

export async function getProfile(db: Db, userId: string): Promise<ProfileView> {
  const profile = await Profile.query(db).findById(userId);
  if (!profile) throw new DomainError(404, 'PROFILE_NOT_FOUND', ACCOUNT_MSG.profileNotFound);
  return toProfileView(profile);
}

export async function updateProfileName(db: Db, userId: string, rawName: string): Promise<ProfileView> {
  const name = checkName(rawName, { allowEmpty: false });
  const profile = await Profile.query(db).patchAndFetchById(userId, { name });
  if (!profile) throw new DomainError(404, 'PROFILE_NOT_FOUND', ACCOUNT_MSG.profileNotFound);
  return toProfileView(profile);
}

/**
 * Checks the confirmation, the strength rule and the current password, then stores the new hash and ends
 * every other session of the user (the session making the change stays signed in).
 */
export async function changePassword(
  knex: Knex,
  actor: { userId: string; sessionId: string },
  input: { currentPassword: string; newPassword: string; confirmPassword: string },
): Promise<{ endedSessions: number }> {
  if (input.newPassword !== input.confirmPassword) throw new DomainError(400, 'PASSWORDS_DO_NOT_MATCH', MSG.passwordsDoNotMatch);
  checkNewPassword(input.newPassword);
  const user = await User.query(knex).findById(actor.userId);
  if (!user) throw new DomainError(404, 'ACCOUNT_NOT_FOUND', 'Account not found');
  if (!(await verifyPassword(input.currentPassword, user.passwordHash))) {
    throw new DomainError(400, 'CURRENT_PASSWORD_INCORRECT', ACCOUNT_MSG.currentPasswordIncorrect);
  }
  const passwordHash = await hashPassword(input.newPassword);
  return knex.transaction(async (trx) => {
    await User.query(trx).patchAndFetchById(user.id, { passwordHash });
    const endedSessions = await endOtherSessions(trx, user.id, actor.sessionId);
    return { endedSessions };
  });
}
