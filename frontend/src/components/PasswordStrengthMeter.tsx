import type { ReactElement } from 'react';
import type { PasswordStrength } from './passwordStrength';

const LEVEL_LABEL = { empty: '', weak: 'Weak', fair: 'Fair', good: 'Good', strong: 'Strong' } as const;

/** The meter bar, the requirement checklist (the warnings) and, once they are met, advice. */
export function PasswordStrengthMeter({ strength, id }: { strength: PasswordStrength; id: string }): ReactElement {
  return (
    <div className="strength" id={id}>
      <div className="strength-row">
        <div
          className={`strength-bar strength-${strength.level}`}
          role="meter"
          aria-label="Password strength"
          aria-valuemin={0}
          aria-valuemax={4}
          aria-valuenow={strength.score}
          aria-valuetext={LEVEL_LABEL[strength.level] || 'No password yet'}
        >
          {[1, 2, 3, 4].map((step) => (
            <span key={step} className={step <= strength.score ? 'filled' : undefined} />
          ))}
        </div>
        <span className="strength-label">{LEVEL_LABEL[strength.level]}</span>
      </div>
      <ul className="requirements" aria-label="Password requirements">
        {strength.requirements.map((r) => (
          <li key={r.id} className={r.met ? 'met' : 'unmet'}>
            <span aria-hidden="true">{r.met ? '✓' : '•'}</span> {r.label}
            <span className="visually-hidden">{r.met ? ' (met)' : ' (not met)'}</span>
          </li>
        ))}
      </ul>
      {strength.passes && strength.suggestions.length > 0 && (
        <p className="strength-hint">{strength.suggestions[0]}</p>
      )}
    </div>
  );
}
