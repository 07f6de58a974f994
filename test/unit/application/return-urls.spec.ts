import { ReturnUrls } from '../../../src/application/account/return-urls';
import { realmDefaultsFrom } from '../../../src/application/realm/realm-defaults';
import { loadConfig } from '../../../src/config/load-config';
import { Realm } from '../../../src/domain/realm/realm';

function returnUrls(profile: 'production' | 'development') {
  const config = loadConfig({ APP_PROFILE: profile, API_URL: 'http://localhost:3000' });
  const realm = Realm.create({ id: 'default', name: 'Default', now: new Date() }, realmDefaultsFrom(config));
  const urls = new ReturnUrls(config);
  return (returnTo: string) => {
    try {
      return urls.assertAllowed(realm, returnTo);
    } catch (error) {
      return (error as { code: string }).code;
    }
  };
}

const DEV_SERVERS = ['http://localhost:5173/', 'http://localhost:5173/auth/callback?from=sso', 'http://127.0.0.1:8080/cb'];

describe('ReturnUrls: where a browser may be sent back (email links, identity providers)', () => {
  it.each(DEV_SERVERS)('the development profile accepts a local dev server page: %s', (url) => {
    expect(returnUrls('development')(url)).toBe(url);
  });

  it.each(DEV_SERVERS)('FED-04: production accepts no page that is not on the allow-list: %s', (url) => {
    expect(returnUrls('production')(url)).toBe('VALIDATION_FAILED');
  });

  it.each([
    ['https on localhost', 'https://localhost:5173/'],
    ['no port', 'http://localhost/cb'],
    ['another host', 'http://evil.example:5173/'],
    ['a name ending in localhost', 'http://evil.localhost.example:5173/'],
    ['userinfo before a remote host', 'http://localhost:5173@evil.example/'],
    ['a fragment', 'http://localhost:5173/cb#x'],
    ['a path that climbs out', 'http://localhost:5173/a/../b'],
    ['a backslash', 'http://localhost:5173\\@evil.example/'],
  ])('the development profile still refuses %s', (_what, url) => {
    expect(returnUrls('development')(url)).toBe('VALIDATION_FAILED');
  });

  it('both profiles accept the console’s own pages', () => {
    for (const profile of ['production', 'development'] as const) {
      expect(returnUrls(profile)('http://localhost:3000/account/')).toBe('http://localhost:3000/account/');
    }
  });
});

describe('ReturnUrls: the OpenID provider’s own sign-in page', () => {
  it('accepts exactly the realm’s interaction return page on API_URL’s origin', () => {
    const url = 'http://localhost:3000/realms/default/interaction/abc_DEF-123/federation';
    expect(returnUrls('production')(url)).toBe(url);
  });

  it.each([
    ['another realm', 'http://localhost:3000/realms/other/interaction/abc/federation'],
    ['another origin', 'http://evil.example/realms/default/interaction/abc/federation'],
    ['another step', 'http://localhost:3000/realms/default/interaction/abc/login'],
    ['a query', 'http://localhost:3000/realms/default/interaction/abc/federation?x=1'],
    ['a path that climbs out', 'http://localhost:3000/realms/default/interaction/../../federation'],
    ['a longer path', 'http://localhost:3000/realms/default/interaction/abc/def/federation'],
  ])('refuses %s', (_what, url) => {
    expect(returnUrls('production')(url)).toBe('VALIDATION_FAILED');
  });
});
