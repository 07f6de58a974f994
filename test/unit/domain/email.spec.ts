import { Email } from '../../../src/domain/user/email';

describe('Email', () => {
  it('trims and lower-cases', () => {
    expect(Email.parse('  Alice.Smith@Example.TEST ').value).toBe('alice.smith@example.test');
  });

  it('brings Unicode to NFC: precomposed and decomposed é are one address', () => {
    const precomposed = Email.parse('\u00e9lodie@example.test');
    const decomposed = Email.parse('E\u0301lodie@example.test');
    expect(decomposed.value).toBe(precomposed.value);
    expect(Email.normalise('e\u0301lodie@example.test ')).toBe('\u00e9lodie@example.test');
  });

  it('refuses CR, LF and other control characters (no header injection)', () => {
    for (const raw of ['a@example.test\r\nBcc: x@evil.test', 'a\n@example.test', 'a@exa\u0000mple.test']) {
      expect(() => Email.parse(raw)).toThrow(expect.objectContaining({ code: 'VALIDATION_FAILED' }));
    }
  });
});
