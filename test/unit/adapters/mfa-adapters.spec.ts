import { AesGcmSecretCipher } from '../../../src/adapters/crypto/aes-gcm-secret-cipher';
import { base32, SpeakeasyTotpVerifier } from '../../../src/adapters/mfa/speakeasy-totp-verifier';
import { TypeOrmServerSecrets } from '../../../src/adapters/persistence/typeorm-server-secrets';
import { AppConfig } from '../../../src/config/app-config';
import { loadConfig } from '../../../src/config/load-config';

describe('SpeakeasyTotpVerifier', () => {
  const totp = new SpeakeasyTotpVerifier();
  // RFC 6238 appendix B: SHA-1 key "12345678901234567890"; the 8-digit codes end in these 6 digits.
  const rfcSecret = base32(Buffer.from('12345678901234567890'));

  it('encodes base32 as RFC 4648 (no padding)', () => {
    expect(rfcSecret).toBe('GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ');
    expect(base32(Buffer.from('foobar'))).toBe('MZXW6YTBOI');
  });

  it.each([
    [59, '287082', 1],
    [1111111109, '081804', 37037036],
    [1234567890, '005924', 41152263],
    [2000000000, '279037', 66666666],
  ])('matches the RFC 6238 vector at T=%i and returns its step', (seconds, code, step) => {
    expect(totp.matchingStep(rfcSecret, code, new Date(seconds * 1000))).toBe(step);
  });

  it('accepts one step of drift either way and no more', () => {
    const at = new Date(1234567890 * 1000);
    expect(totp.matchingStep(rfcSecret, '005924', new Date(at.getTime() + 30_000))).toBe(41152263);
    expect(totp.matchingStep(rfcSecret, '005924', new Date(at.getTime() - 30_000))).toBe(41152263);
    expect(totp.matchingStep(rfcSecret, '005924', new Date(at.getTime() + 60_000))).toBeNull();
  });

  it('refuses codes that are not exactly six digits (speakeasy would parseInt them)', () => {
    const at = new Date(1234567890 * 1000);
    expect(totp.matchingStep(rfcSecret, '5924', at)).toBeNull();
    expect(totp.matchingStep(rfcSecret, '5924xx', at)).toBeNull();
    expect(totp.matchingStep(rfcSecret, ' 05924', at)).toBeNull();
  });

  it('generates 160-bit secrets and a key URI with issuer prefix and parameters', () => {
    const secret = totp.generateSecret();
    expect(secret).toMatch(/^[A-Z2-7]{32}$/);
    expect(totp.generateSecret()).not.toBe(secret);
    const uri = totp.keyUri({ secret, issuer: 'Acme Corp', account: 'a+b@example.com' });
    expect(uri).toBe(
      `otpauth://totp/Acme%20Corp:a%2Bb%40example.com?secret=${secret}&issuer=Acme%20Corp&algorithm=SHA1&digits=6&period=30`,
    );
  });
});

describe('AesGcmSecretCipher', () => {
  class FakeSecrets {
    generated = 0;
    async get(_name: string, generate: () => string) {
      this.generated += 1;
      return generate();
    }
  }

  function cipher(key: string | null, secrets = new FakeSecrets()) {
    const config: AppConfig = loadConfig({});
    config.mfaEncryptionKey = key;
    return new AesGcmSecretCipher(config, secrets as unknown as TypeOrmServerSecrets);
  }

  it('round-trips, with a fresh IV each time', async () => {
    const c = cipher(Buffer.alloc(32, 1).toString('base64'));
    const a = await c.encrypt('JBSWY3DPEHPK3PXP', 'user-1');
    const b = await c.encrypt('JBSWY3DPEHPK3PXP', 'user-1');
    expect(a).not.toBe(b);
    expect(a).not.toContain('JBSWY3DPEHPK3PXP');
    expect(await c.decrypt(a, 'user-1')).toBe('JBSWY3DPEHPK3PXP');
  });

  it('refuses another context, a tampered value and another key', async () => {
    const c = cipher(Buffer.alloc(32, 1).toString('base64'));
    const value = await c.encrypt('secret', 'user-1');
    await expect(c.decrypt(value, 'user-2')).rejects.toThrow();
    const [v, iv, tag, body] = value.split('.');
    const flipped = Buffer.from(body, 'base64url');
    flipped[0] ^= 1;
    await expect(c.decrypt([v, iv, tag, flipped.toString('base64url')].join('.'), 'user-1')).rejects.toThrow();
    await expect(cipher(Buffer.alloc(32, 2).toString('base64')).decrypt(value, 'user-1')).rejects.toThrow();
    await expect(c.decrypt('plain', 'user-1')).rejects.toThrow();
  });

  it('without MFA_ENCRYPTION_KEY, generates one key once through the server secrets', async () => {
    const secrets = new FakeSecrets();
    const c = cipher(null, secrets);
    const value = await c.encrypt('secret', 'u');
    expect(await c.decrypt(value, 'u')).toBe('secret');
    expect(secrets.generated).toBe(1);
  });
});
