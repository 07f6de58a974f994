import { allowedReturnUrl } from '../../../src/domain/federation/return-url';

const ALLOWED = ['https://app.example.com/auth/callback', 'https://app.example.com/done?from=sso'];
const API = 'https://id.example.com';

describe('allowedReturnUrl (FED-04: no open redirect)', () => {
  it.each(ALLOWED)('accepts %s, an exact entry of the allow-list', (url) => {
    expect(allowedReturnUrl(url, ALLOWED, API)?.href).toBe(url);
  });

  it('accepts a page of the service’s own console', () => {
    expect(allowedReturnUrl('https://id.example.com/account/sign-in', [], API)?.pathname).toBe('/account/sign-in');
  });

  it.each([
    ['another host', 'https://evil.example.net/auth/callback'],
    ['a look-alike host', 'https://app.example.com.evil.net/auth/callback'],
    ['userinfo before the host', 'https://app.example.com@evil.net/auth/callback'],
    ['a scheme-relative URL', '//evil.net/auth/callback'],
    ['a backslash', 'https://app.example.com\\@evil.net/auth/callback'],
    ['a fragment', 'https://app.example.com/auth/callback#x'],
    ['another path', 'https://app.example.com/auth/callback/../admin'],
    ['a longer path', 'https://app.example.com/auth/callback/x'],
    ['a different query', 'https://app.example.com/auth/callback?next=https://evil.net'],
    ['http instead of https', 'http://app.example.com/auth/callback'],
    ['upper case written differently', 'HTTPS://APP.EXAMPLE.COM/auth/callback'],
    ['a javascript: URL', 'javascript:alert(1)'],
    ['whitespace', ' https://app.example.com/auth/callback'],
    ['a console page on another origin', 'https://evil.net/account/sign-in'],
    ['a console path that climbs out', 'https://id.example.com/account/../admin'],
    ['the console origin outside the console', 'https://id.example.com/api/v1/auth/me'],
    ['a non-string', 42],
  ])('refuses %s', (_what, url) => {
    expect(allowedReturnUrl(url, ALLOWED, API)).toBeNull();
  });
});
