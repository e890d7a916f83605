import { describe, expect, it } from '@jest/globals';
import { passwordStrength } from './passwordStrength';

describe('passwordStrength', () => {
  it('is empty with nothing typed', () => {
    expect(passwordStrength('')).toMatchObject({ passes: false, level: 'empty', score: 0 });
  });

  it('fails and lists the unmet requirements until 8 characters with a letter and a digit', () => {
    const short = passwordStrength('abc1');
    expect(short.passes).toBe(false);
    expect(short.level).toBe('weak');
    expect(short.requirements.filter((r) => !r.met).map((r) => r.id)).toEqual(['length']);
    expect(passwordStrength('abcdefgh').requirements.find((r) => r.id === 'digit')?.met).toBe(false);
    expect(passwordStrength('12345678').requirements.find((r) => r.id === 'letter')?.met).toBe(false);
  });

  it('passes at the server rule and grows stronger with length, case and symbols', () => {
    expect(passwordStrength('abcdefg1')).toMatchObject({ passes: true, level: 'fair', score: 2 });
    expect(passwordStrength('abcdefG1')).toMatchObject({ passes: true, level: 'good', score: 3 });
    expect(passwordStrength('abcdefG1!xyz')).toMatchObject({ passes: true, level: 'strong', score: 4, suggestions: [] });
  });
});
