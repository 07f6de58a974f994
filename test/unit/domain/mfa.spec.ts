import { randomBytes } from 'node:crypto';
import { normaliseRecoveryCode, recoveryCodeFrom } from '../../../src/domain/mfa/recovery-code';
import { credentialName, signCountAcceptable } from '../../../src/domain/mfa/webauthn';

describe('recovery codes', () => {
  it('are 16 base32 characters in groups of four', () => {
    const code = recoveryCodeFrom(randomBytes(32).toString('base64url'));
    expect(code).toMatch(/^[a-z2-7]{4}(-[a-z2-7]{4}){3}$/);
  });

  it('use every character of the alphabet (each base64url character keeps 5 uniform bits)', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 200; i += 1) for (const c of recoveryCodeFrom(randomBytes(32).toString('base64url')).replace(/-/g, '')) seen.add(c);
    expect(seen.size).toBe(32);
  });

  it('normalise case, spaces and dashes away, and reject anything else', () => {
    expect(normaliseRecoveryCode('abcd-efgh-ijkl-mn23')).toBe('ABCDEFGHIJKLMN23');
    expect(normaliseRecoveryCode(' ABCD efgh IJKL mn23 ')).toBe('ABCDEFGHIJKLMN23');
    expect(normaliseRecoveryCode('abcd-efgh-ijkl-mn2')).toBeNull();
    expect(normaliseRecoveryCode('abcd-efgh-ijkl-mn18')).toBeNull(); // 1 and 8 are not base32
    expect(normaliseRecoveryCode('')).toBeNull();
  });

  it('refuse too little randomness', () => {
    expect(() => recoveryCodeFrom('short')).toThrow();
  });
});

describe('WebAuthn signature counter (WebAuthn §7.2)', () => {
  it.each([
    [0, 0, true],
    [0, 1, true],
    [5, 6, true],
    [5, 5, false],
    [5, 4, false],
    [5, 0, false],
  ])('stored %i, received %i → %s', (stored, received, ok) => {
    expect(signCountAcceptable(stored, received)).toBe(ok);
  });
});

describe('credential names', () => {
  it('default when absent, trim, and refuse empty, long or control characters', () => {
    expect(credentialName(undefined)).toBe('Security key');
    expect(credentialName('  YubiKey  ')).toBe('YubiKey');
    expect(() => credentialName('   ')).toThrow(expect.objectContaining({ code: 'VALIDATION_FAILED' }));
    expect(() => credentialName('x'.repeat(65))).toThrow(expect.objectContaining({ code: 'VALIDATION_FAILED' }));
    expect(() => credentialName('a\u0007b')).toThrow(expect.objectContaining({ code: 'VALIDATION_FAILED' }));
  });
});
