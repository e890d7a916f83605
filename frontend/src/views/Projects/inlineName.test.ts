import { describe, expect, it } from '@jest/globals';
import { nameToSave } from './inlineName';

describe('nameToSave', () => {
  it('saves a changed name, trimmed', () => {
    expect(nameToSave('  Lobby at dusk ', 'lobby.png')).toBe('Lobby at dusk');
  });

  it('does not save an empty or unchanged name', () => {
    expect(nameToSave('   ', 'lobby.png')).toBeNull();
    expect(nameToSave('lobby.png', 'lobby.png')).toBeNull();
    expect(nameToSave(' lobby.png ', 'lobby.png')).toBeNull();
  });
});
