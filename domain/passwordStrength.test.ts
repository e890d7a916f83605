import { isStrongPassword, passwordRequirements, passwordScore, PASSWORD_MAX_LENGTH } from './passwordStrength';

describe('isStrongPassword', () => {
  it('accepts 8 or more characters with a letter and a digit', () => {
    expect(isStrongPassword('abcdefg1')).toBe(true);
    expect(isStrongPassword('Ünïcödé9')).toBe(true);
  });
  it('refuses short passwords, and passwords without a letter or without a digit', () => {
    expect(isStrongPassword('abcde12')).toBe(false);
    expect(isStrongPassword('12345678')).toBe(false);
    expect(isStrongPassword('abcdefgh')).toBe(false);
  });
  it('refuses passwords longer than the maximum', () => {
    expect(isStrongPassword(`a1${'x'.repeat(PASSWORD_MAX_LENGTH)}`)).toBe(false);
  });
});

describe('passwordRequirements', () => {
  it('reports each requirement for the strength meter', () => {
    expect(passwordRequirements('abc').map((r) => [r.id, r.met])).toEqual([
      ['length', false],
      ['letter', true],
      ['digit', false],
    ]);
    expect(passwordScore('abc')).toBe(1);
    expect(passwordScore('abcdefg1')).toBe(3);
  });
});
