import { describe, expect, it } from '@jest/globals';
import { initialsFor } from './initials';

describe('initialsFor', () => {
  it('takes the first letters of the first and last words of the name', () => {
    expect(initialsFor('Ada Mary Lovelace', 'ada@example.com')).toBe('AL');
    expect(initialsFor('  grace   hopper ', 'g@example.com')).toBe('GH');
  });

  it('uses one letter for a one-word name', () => {
    expect(initialsFor('Prince', 'p@example.com')).toBe('P');
  });

  it('falls back to the e-mail when the name is blank', () => {
    expect(initialsFor('   ', 'jane.doe@example.com')).toBe('JD');
    expect(initialsFor('', 'studio@example.com')).toBe('S');
    expect(initialsFor(null, 'x_y@example.com')).toBe('XY');
  });
});
