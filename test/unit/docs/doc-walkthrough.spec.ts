import { compareWithShown, extractWalkthrough, parseJsonStream } from '../../support/doc-walkthrough';

const doc = [
  'Intro',
  '```sh',
  'npm start',
  '```',
  '<!-- walkthrough -->',
  '```sh',
  "ADMIN_X=1 NAME='a b' npm start > service.log 2>&1 &",
  'API=http://localhost:3000',
  '```',
  'Step one:',
  '```sh',
  'curl -s $API/one',
  '```',
  '',
  '```json',
  '{"a":1}',
  '{"b":[true]}',
  '```',
  '```sh',
  'echo quiet',
  '```',
  'Text between.',
  '```json',
  '{"not":"an answer"}',
  '```',
  '<!-- /walkthrough -->',
].join('\n');

describe('reading a walk-through out of a document', () => {
  it('takes the sh blocks between the markers, each with the json block right after it', () => {
    const walkthrough = extractWalkthrough(doc);
    expect(walkthrough.startEnv).toEqual({ ADMIN_X: '1', NAME: 'a b' });
    expect(walkthrough.steps.map((s) => [s.index, s.script, s.expected])).toEqual([
      [0, 'API=http://localhost:3000\n', []],
      [1, 'curl -s $API/one\n', [{ a: 1 }, { b: [true] }]],
      [2, 'echo quiet\n', []],
    ]);
  });

  it('refuses a document without markers or without a start step', () => {
    expect(() => extractWalkthrough('```sh\nnpm start\n```')).toThrow(/walkthrough/);
    expect(() => extractWalkthrough('<!-- walkthrough -->\n```sh\ncurl x\n```\n<!-- /walkthrough -->')).toThrow(/start/);
  });

  it('splits concatenated JSON values, braces inside strings included', () => {
    expect(parseJsonStream('{"a":"}{"}{"b":2}\n[1]')).toEqual([{ a: '}{' }, { b: 2 }, [1]]);
    expect(() => parseJsonStream('{"a":1} curl: (7) Failed to connect')).toThrow(/not JSON/);
    expect(() => parseJsonStream('{"a":1')).toThrow(/unfinished/);
  });
});

describe('comparing an answer with the one shown', () => {
  const shown = {
    user: { id: '0b6c1f9e-3a52-4d7b-9c1e-5f2a8d4e7b10', email: 'alice@example.com', lastLoginAt: '2026-11-25T21:44:01.000Z' },
    tokens: { accessToken: 'eyJhbGciOi…', refreshToken: '4Rz0c3VhL…', expiresIn: 900 },
    location: { country: null, city: null },
  };
  const actual = {
    user: { id: '88c12616-08f9-4bf1-a940-b7a26ee4d2ce', email: 'alice@example.com', lastLoginAt: '2027-01-02T03:04:05.678Z' },
    tokens: { accessToken: 'eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJ4In0.c2ln', refreshToken: 'Zx_9-abc', expiresIn: 900 },
    location: { country: null, city: null },
  };

  it('accepts other ids, tokens and times of the same format', () => {
    expect(compareWithShown(shown, actual)).toEqual([]);
  });

  it('reports a different literal value, a missing key and an extra key', () => {
    expect(compareWithShown(shown, { ...actual, tokens: { ...actual.tokens, expiresIn: 901 } })).toEqual([
      '$.tokens.expiresIn: shown 900, got 901',
    ]);
    expect(compareWithShown(shown, { ...actual, location: null })).toEqual(['$.location: shown {"country":null,"city":null}, got null']);
    const { email: _email, ...withoutEmail } = actual.user;
    expect(compareWithShown(shown, { ...actual, user: { ...withoutEmail, name: 'x' } })).toEqual([
      '$.user.email: shown but missing from the answer',
      '$.user.name: in the answer ("x") but not shown',
    ]);
  });

  it('reports an id, a token or a time of another format', () => {
    const wrong = {
      ...actual,
      user: { ...actual.user, id: 42, lastLoginAt: 'yesterday' },
      tokens: { ...actual.tokens, accessToken: 'opaque', refreshToken: 'has spaces' },
    };
    expect(compareWithShown(shown, wrong)).toEqual([
      '$.user.id: shown "0b6c1f9e-3a52-4d7b-9c1e-5f2a8d4e7b10", got 42',
      '$.user.lastLoginAt: expected an ISO 8601 UTC time (shown "2026-11-25T21:44:01.000Z"), got "yesterday"',
      '$.tokens.accessToken: expected a JWT (shown "eyJhbGciOi…"), got "opaque"',
      '$.tokens.refreshToken: expected a base64url string (shown "4Rz0c3VhL…"), got "has spaces"',
    ]);
  });

  it('takes a shown address with digits as a fresh address: other digits, nothing else, may differ', () => {
    const fresh = { email: 'alice-2093114847@example.com' };
    expect(compareWithShown(fresh, { email: 'alice-771@example.com' })).toEqual([]);
    expect(compareWithShown(fresh, { email: 'bob-771@example.com' })).toEqual([
      '$.email: shown "alice-2093114847@example.com" (digits may differ), got "bob-771@example.com"',
    ]);
    expect(compareWithShown(fresh, { email: 'alice-@example.com' })).toHaveLength(1);
    // Without digits in the shown address, the address itself is shown.
    expect(compareWithShown({ email: 'alice@example.com' }, { email: 'alice1@example.com' })).toHaveLength(1);
  });

  it('compares arrays item by item and their lengths', () => {
    expect(compareWithShown({ roles: [] }, { roles: ['realm-admin'] })).toEqual(['$.roles: shown 0 items, got 1: ["realm-admin"]']);
  });
});
