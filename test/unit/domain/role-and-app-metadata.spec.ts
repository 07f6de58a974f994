import { Role } from '../../../src/domain/role/role';
import { parseAppMetadata } from '../../../src/domain/user/app-metadata';
import { aUser } from '../../builders/user.builder';

const now = new Date('2026-11-27T12:00:00.000Z');

describe('Role', () => {
  it.each(['teacher', 'billing:read', 'org.admin', 'a', `r${'x'.repeat(63)}`])('defines a role named %s', (name) => {
    expect(Role.define({ realmId: 'default', name, now }).name).toBe(name);
  });

  it.each(['Teacher', '1st', '', 'has space', 'é', `r${'x'.repeat(64)}`])('refuses the name %p with VALIDATION_FAILED', (name) => {
    expect(() => Role.define({ realmId: 'default', name, now })).toThrow(expect.objectContaining({ code: 'VALIDATION_FAILED' }));
  });

  it.each(['realm-admin', 'super-admin'])('refuses to define the built-in %s with ROLE_EXISTS, in any realm', (name) => {
    expect(() => Role.define({ realmId: 'acme', name, now })).toThrow(expect.objectContaining({ code: 'ROLE_EXISTS' }));
  });

  it('keeps a trimmed description, null when blank, and refuses a long one or control characters', () => {
    expect(Role.define({ realmId: 'default', name: 'a', description: '  Grades  ', now }).description).toBe('Grades');
    expect(Role.define({ realmId: 'default', name: 'a', description: '   ', now }).description).toBeNull();
    expect(() => Role.define({ realmId: 'default', name: 'a', description: 'x'.repeat(201), now })).toThrow(
      expect.objectContaining({ code: 'VALIDATION_FAILED' }),
    );
    expect(() => Role.define({ realmId: 'default', name: 'a', description: 'a\u0000b', now })).toThrow(
      expect.objectContaining({ code: 'VALIDATION_FAILED' }),
    );
  });

  it('builds realm-admin into every realm and super-admin into master only, dated as the realm', () => {
    const created = new Date('2026-01-01T00:00:00.000Z');
    expect(Role.builtIns({ id: 'acme', createdAt: created }).map((r) => [r.name, r.builtIn, r.createdAt])).toEqual([
      ['realm-admin', true, created],
    ]);
    expect(Role.builtIns({ id: 'master', createdAt: created }).map((r) => r.name)).toEqual(['realm-admin', 'super-admin']);
  });
});

describe('app metadata', () => {
  const details = (fn: () => unknown) => {
    try {
      fn();
    } catch (error) {
      return (error as { code: string; meta: { details: unknown } }).code === 'VALIDATION_FAILED'
        ? (error as { meta: { details: { field: string; message: string }[] } }).meta.details
        : error;
    }
    throw new Error('accepted');
  };

  it('accepts an object nested 3 levels below the top, and exactly 1024 bytes serialised', () => {
    expect(parseAppMetadata({ a: { b: [{ c: 1 }] } })).toEqual({ a: { b: [{ c: 1 }] } });
    const exact = { k: 'x'.repeat(1024 - '{"k":""}'.length) };
    expect(JSON.stringify(exact)).toHaveLength(1024);
    expect(parseAppMetadata(exact)).toEqual(exact);
    expect(parseAppMetadata({})).toEqual({});
  });

  it('refuses a 4th level of objects or arrays, naming where', () => {
    expect(parseAppMetadata({ a: { b: { c: { d: 1 } } } })).toEqual({ a: { b: { c: { d: 1 } } } });
    expect(details(() => parseAppMetadata({ a: { b: { c: { d: {} } } } }))).toEqual([
      { field: 'appMetadata', message: 'must nest at most 3 levels of objects or arrays (appMetadata.a.b.c.d is deeper)' },
    ]);
    expect(details(() => parseAppMetadata({ a: [[[[]]]] }))).toEqual([
      { field: 'appMetadata', message: expect.stringContaining('appMetadata.a[0][0][0]') },
    ]);
  });

  it('refuses 1025 bytes, counting UTF-8 bytes rather than characters', () => {
    const over = { k: 'x'.repeat(1025 - '{"k":""}'.length) };
    expect(details(() => parseAppMetadata(over))).toEqual([
      { field: 'appMetadata', message: 'must be at most 1024 bytes serialised (it is 1025)' },
    ]);
    // 400 two-byte characters: 400 characters, 800 bytes + the rest.
    expect(() => parseAppMetadata({ k: 'é'.repeat(400), l: 'x'.repeat(300) })).toThrow(
      expect.objectContaining({ code: 'VALIDATION_FAILED' }),
    );
  });

  it('refuses __proto__, constructor and prototype keys at any level, as parsed JSON holds them', () => {
    const message = 'is a reserved key (__proto__, constructor and prototype are refused)';
    expect(details(() => parseAppMetadata(JSON.parse('{"__proto__":{"a":1}}')))).toEqual([{ field: 'appMetadata.__proto__', message }]);
    expect(details(() => parseAppMetadata(JSON.parse('{"x":[{"constructor":1}]}')))).toEqual([
      { field: 'appMetadata.x[0].constructor', message },
    ]);
    expect(details(() => parseAppMetadata({ y: { prototype: null } }))).toEqual([{ field: 'appMetadata.y.prototype', message }]);
  });

  it.each([null, [], 'text', 3])('refuses %p: not an object', (value) => {
    expect(details(() => parseAppMetadata(value))).toEqual([{ field: 'appMetadata', message: 'must be a JSON object' }]);
  });

  it('is replaced whole on the user, and starts empty', () => {
    const user = aUser();
    expect(user.appMetadata).toEqual({});
    user.setAppMetadata({ plan: 'pro' }, now);
    user.setAppMetadata({ schoolId: 'n-42' }, now);
    expect(user.appMetadata).toEqual({ schoolId: 'n-42' });
    expect(user.summary().appMetadata).toEqual({ schoolId: 'n-42' });
  });
});
