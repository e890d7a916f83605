import { isStrongPassword, passwordRequirements, type PasswordRequirement } from '../../../domain/passwordStrength';

export type { PasswordRequirement };

export type StrengthLevel = 'empty' | 'weak' | 'fair' | 'good' | 'strong';

export interface PasswordStrength {
  /** the server's rule (domain/passwordStrength.ts), each requirement met or not: the meter's warnings */
  requirements: PasswordRequirement[];
  /** true when the server accepts the password */
  passes: boolean;
  /** 0..4 for the bar */
  score: number;
  level: StrengthLevel;
  /** advice beyond the rule, shown once it is met */
  suggestions: string[];
}

/**
 * The meter's reading. Passing the rule is what counts (it gates submit); beyond it, length, mixed case and
 * symbols move a passing password from fair to strong.
 */
export function passwordStrength(password: string): PasswordStrength {
  const requirements = passwordRequirements(password);
  const passes = isStrongPassword(password);
  if (password.length === 0) return { requirements, passes, score: 0, level: 'empty', suggestions: [] };
  if (!passes) {
    const met = requirements.filter((r) => r.met).length;
    return { requirements, passes, score: met >= 2 ? 1 : 0, level: 'weak', suggestions: [] };
  }
  const long = password.length >= 12;
  const mixedCase = /\p{Lu}/u.test(password) && /\p{Ll}/u.test(password);
  const symbol = /[^\p{L}\d]/u.test(password);
  const score = Math.min(4, 2 + [long, mixedCase, symbol].filter(Boolean).length);
  const level: StrengthLevel = score >= 4 ? 'strong' : score === 3 ? 'good' : 'fair';
  const suggestions: string[] = [];
  if (!long) suggestions.push('Use 12 or more characters for a stronger password');
  if (!mixedCase) suggestions.push('Mix upper and lower case letters');
  if (!symbol) suggestions.push('Add a symbol such as ! or #');
  return { requirements, passes, score, level, suggestions: level === 'strong' ? [] : suggestions };
}
