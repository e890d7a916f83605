import { hashPassword, verifyAgainstDecoy, verifyPassword } from './passwords';

describe('password hashing', () => {
  it('stores a salted scrypt hash, never the password', async () => {
    const a = await hashPassword('correct horse 1');
    const b = await hashPassword('correct horse 1');
    expect(a).toMatch(/^scrypt\$16384\$8\$1\$[A-Za-z0-9+/=]+\$[A-Za-z0-9+/=]+$/);
    expect(a).not.toContain('correct horse');
    expect(a).not.toBe(b);
  });

  it('verifies the right password and refuses a wrong one', async () => {
    const stored = await hashPassword('correct horse 1');
    await expect(verifyPassword('correct horse 1', stored)).resolves.toBe(true);
    await expect(verifyPassword('correct horse 2', stored)).resolves.toBe(false);
  });

  it('never matches a malformed stored hash', async () => {
    await expect(verifyPassword('x', '')).resolves.toBe(false);
    await expect(verifyPassword('x', 'plain-text')).resolves.toBe(false);
    await expect(verifyPassword('x', 'scrypt$0$8$1$c2FsdA==$aGFzaA==')).resolves.toBe(false);
  });

  it('answers false for the decoy check', async () => {
    await expect(verifyAgainstDecoy('anything1')).resolves.toBe(false);
  });
});
