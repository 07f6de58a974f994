import { assertAcceptablePassword } from '../../../src/domain/user/password-policy';

const common = (c: string) => ['password1234', 'qwertyuiop123', '123456789012'].includes(c);
const reason = (password: string, email = 'alice.smith@example.com') => {
  try {
    assertAcceptablePassword(password, common, { email, contextWords: ['default'] });
    return null;
  } catch (error) {
    return (error as { code: string; meta: { details: { message: string }[] } }).meta.details[0].message;
  }
};

describe('password policy', () => {
  it('accepts 8 to 128 code points of any printable text, with no composition rules', () => {
    expect(reason('correct horse battery staple')).toBeNull();
    expect(reason('a'.repeat(7) + 'b')).toBeNull();
    expect(reason('🔑'.repeat(8))).toBeNull();
    expect(reason('x'.repeat(128))).toBeNull();
  });

  it('counts code points, not UTF-16 units or bytes', () => {
    expect(reason('🔑'.repeat(7))).toMatch(/at least 8/);
    expect(reason('🔑'.repeat(129))).toMatch(/at most 128/);
  });

  it('refuses too short and too long passwords with the reason', () => {
    expect(reason('short')).toMatch(/at least 8/);
    expect(reason('x'.repeat(129))).toMatch(/at most 128/);
  });

  it('refuses the email itself, common passwords, and the email local part with digits', () => {
    expect(reason('Alice.Smith@example.com')).toMatch(/email/);
    expect(reason('password1234')).toMatch(/common/);
    expect(reason('alice.smith2024')).toMatch(/based on the email/);
  });

  it('applies NFKC before counting: a fullwidth string counts as its normalised form', () => {
    expect(reason('ｐａｓｓｗｏｒｄ１２３４')).toMatch(/common/);
  });
});
