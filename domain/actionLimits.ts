/**
 * How often a person, a workspace or a client address may do the actions that cost someone else something: an
 * invitation sends an e-mail, a test event sends a request to the workspace's receiver, a workspace is a new set of
 * per-workspace budgets (uploads in flight), and invitation links are secrets worth guessing. Over a budget the
 * API answers 429 with Retry-After and a message that says when (api/actionLimits.ts). The numbers leave a person
 * working at human speed untouched.
 */
import { DomainError } from './errors';
import { waitText } from './plural';

export type LimitedAction =
  | 'invite'
  | 'invitationLookup'
  | 'invitationAccept'
  | 'webhookTest'
  | 'workspaceCreate'
  | 'creditRequest'
  | 'passwordReset'
  | 'verificationEmail'
  | 'emailChange'
  | 'passkeyChallenge'
  | 'ssoSignIn';

/** Whose budget a rule counts: the signed-in person, the workspace acted in, the client's address, or an e-mail address asked about. */
export type LimitSubject = 'person' | 'workspace' | 'address' | 'email';

export interface ActionWindow {
  /** actions allowed in the window */
  points: number;
  durationSeconds: number;
}

export interface ActionLimit {
  /** what the refusal says there were too many of ('invitations sent') */
  what: string;
  rules: Partial<Record<LimitSubject, ActionWindow>>;
}

const MINUTE = 60;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

export const ACTION_LIMITS: Readonly<Record<LimitedAction, ActionLimit>> = {
  invite: { what: 'invitations sent', rules: { person: { points: 20, durationSeconds: HOUR }, workspace: { points: 50, durationSeconds: DAY } } },
  invitationLookup: { what: 'invitation links opened', rules: { address: { points: 300, durationSeconds: 10 * MINUTE } } },
  invitationAccept: { what: 'invitation accepts', rules: { person: { points: 20, durationSeconds: HOUR } } },
  webhookTest: { what: 'test events sent', rules: { workspace: { points: 10, durationSeconds: 10 * MINUTE } } },
  workspaceCreate: { what: 'workspaces created', rules: { person: { points: 10, durationSeconds: DAY } } },
  creditRequest: { what: 'requests for credits', rules: { person: { points: 3, durationSeconds: HOUR } } },
  // counted whether or not the address has an account: the refusal tells nothing about it
  passwordReset: { what: 'password reset requests', rules: { email: { points: 3, durationSeconds: HOUR }, address: { points: 20, durationSeconds: HOUR } } },
  verificationEmail: { what: 'verification e-mails', rules: { person: { points: 3, durationSeconds: HOUR } } },
  emailChange: { what: 'e-mail address changes', rules: { person: { points: 3, durationSeconds: HOUR } } },
  // each is a row kept 5 minutes: a sign-in page asks for one, a script could ask for millions
  passkeyChallenge: { what: 'passkey sign-in attempts', rules: { address: { points: 60, durationSeconds: 10 * MINUTE } } },
  // each start stores a sign-in attempt: a client cannot fill the table
  ssoSignIn: { what: 'single sign-on attempts', rules: { address: { points: 30, durationSeconds: 10 * MINUTE } } },
};

export const ACTION_LIMITED_CODE = 'RATE_LIMITED';

/** "Too many invitations sent. Please try again in 9 minutes." */
export function actionLimitMessage(action: LimitedAction, retryAfterSeconds: number): string {
  return `Too many ${ACTION_LIMITS[action].what}. Please try again in ${waitText(retryAfterSeconds)}.`;
}

/** An action over one of its budgets: 429 with Retry-After (api/middleware/errors.ts). */
export class ActionLimitedError extends DomainError {
  constructor(
    readonly action: LimitedAction,
    readonly retryAfterSeconds: number,
  ) {
    super(429, ACTION_LIMITED_CODE, actionLimitMessage(action, retryAfterSeconds));
  }
}
