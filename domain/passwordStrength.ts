/** The password rule of sign-up and password change, shared by the API and the front end's strength meter. */
export const PASSWORD_MIN_LENGTH = 8;
export const PASSWORD_MAX_LENGTH = 200;

export interface PasswordRequirement {
  id: 'length' | 'letter' | 'digit';
  label: string;
  met: boolean;
}

export function passwordRequirements(password: string): PasswordRequirement[] {
  return [
    { id: 'length', label: `At least ${PASSWORD_MIN_LENGTH} characters`, met: password.length >= PASSWORD_MIN_LENGTH },
    { id: 'letter', label: 'At least one letter', met: /\p{L}/u.test(password) },
    { id: 'digit', label: 'At least one number', met: /\d/.test(password) },
  ];
}

/** True when every requirement is met (and the password is not absurdly long). */
export function isStrongPassword(password: string): boolean {
  return password.length <= PASSWORD_MAX_LENGTH && passwordRequirements(password).every((r) => r.met);
}

/** 0..3: how many requirements are met, for the meter's bar. */
export function passwordScore(password: string): number {
  return passwordRequirements(password).filter((r) => r.met).length;
}
