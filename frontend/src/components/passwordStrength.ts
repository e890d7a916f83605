/**
 * The password rule the API enforces (at least 8 characters, with a letter and a digit) and a strength
 * score for the meter. TODO(domain): switch to domain/passwordStrength.ts once the API side exports it.
 */

export interface PasswordRequirement {
  id: 'length' | 'letter' | 'digit';
  label: string;
  met: boolean;
}

export type StrengthLevel = 'empty' | 'weak' | 'fair' | 'good' | 'strong';

export interface PasswordStrength {
  requirements: PasswordRequirement[];
  /** true when every requirement is met: what the server accepts */
  passes: boolean;
  /** 0..4 */
  score: number;
  level: StrengthLevel;
  /** advice beyond the requirements, shown once they are met */
  suggestions: string[];
}

export const MIN_PASSWORD_LENGTH = 8;

export function passwordStrength(password: string): PasswordStrength {
  const requirements: PasswordRequirement[] = [
    { id: 'length', label: `At least ${MIN_PASSWORD_LENGTH} characters`, met: password.length >= MIN_PASSWORD_LENGTH },
    { id: 'letter', label: 'At least one letter', met: /\p{L}/u.test(password) },
    { id: 'digit', label: 'At least one number', met: /\d/.test(password) },
  ];
  const passes = requirements.every((r) => r.met);
  const long = password.length >= 12;
  const mixedCase = /\p{Lu}/u.test(password) && /\p{Ll}/u.test(password);
  const symbol = /[^\p{L}\d]/u.test(password);

  if (password.length === 0) return { requirements, passes, score: 0, level: 'empty', suggestions: [] };
  if (!passes) {
    const met = requirements.filter((r) => r.met).length;
    return { requirements, passes, score: met >= 2 ? 1 : 0, level: 'weak', suggestions: [] };
  }
  const extras = [long, mixedCase, symbol].filter(Boolean).length;
  const score = Math.min(4, 2 + extras);
  const level: StrengthLevel = score >= 4 ? 'strong' : score === 3 ? 'good' : 'fair';
  const suggestions: string[] = [];
  if (!long) suggestions.push('Use 12 or more characters for a stronger password');
  if (!mixedCase) suggestions.push('Mix upper and lower case letters');
  if (!symbol) suggestions.push('Add a symbol such as ! or #');
  return { requirements, passes, score, level, suggestions: level === 'strong' ? [] : suggestions };
}
