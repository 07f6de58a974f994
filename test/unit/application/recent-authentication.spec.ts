import { RecentAuthentication } from '../../../src/application/sign-in/recent-authentication';
import { loadConfig } from '../../../src/config/load-config';
import { Session } from '../../../src/domain/session/session';
import { InMemorySessionRepository } from '../../fakes/in-memory-session.repository';
import { FixedClock } from '../../fakes/simple-fakes';

function fixture(env: Record<string, string> = {}) {
  const config = loadConfig(env);
  const clock = new FixedClock();
  const sessions = new InMemorySessionRepository();
  const session = Session.open({
    id: crypto.randomUUID(),
    realmId: 'default',
    userId: crypto.randomUUID(),
    device: { id: 'd1', name: 'Test browser', type: 'browser', fingerprint: null },
    referenceFingerprint: {},
    ip: '203.0.113.9',
    location: { country: null, city: null },
    userAgent: null,
    amr: ['pwd'],
    now: clock.now(),
    lifetime: { idleTimeoutSeconds: config.sessionIdleTimeoutSeconds, maxLifetimeSeconds: config.sessionMaxLifetimeSeconds },
  });
  sessions.rows.set(session.id, session);
  return { clock, session, recent: new RecentAuthentication(sessions, clock, config) };
}

describe('RecentAuthentication', () => {
  it('lets a session signed in up to RECENT_AUTH_MAX_AGE_SECONDS (default 900) ago through', async () => {
    const f = fixture();
    f.clock.advance(900);
    await expect(f.recent.require('default', f.session.id, 'Adding a key')).resolves.toBeUndefined();
  });

  it('refuses an older sign-in with FORBIDDEN, even though the session itself is still live', async () => {
    const f = fixture();
    f.clock.advance(901);
    await expect(f.recent.require('default', f.session.id, 'Adding a key')).rejects.toMatchObject({
      code: 'FORBIDDEN',
      message: 'Adding a key needs a recent sign-in: sign in again, then retry within 15 minutes',
    });
  });

  it('follows the configured limit', async () => {
    const f = fixture({ RECENT_AUTH_MAX_AGE_SECONDS: '60' });
    f.clock.advance(61);
    await expect(f.recent.require('default', f.session.id, 'Adding a key')).rejects.toMatchObject({ code: 'FORBIDDEN' });
  });

  it('refuses a flagged session with FORBIDDEN, however recent its sign-in, until the flag clears', async () => {
    const f = fixture();
    f.session.flagMismatch(0.31, f.clock.now());
    const onHold = { code: 'FORBIDDEN', message: expect.stringContaining('sign in again') };
    await expect(f.recent.require('default', f.session.id, 'Adding a key')).rejects.toMatchObject(onHold);
    await expect(f.recent.requireForConfirmation('default', f.session.id, 'This change')).rejects.toMatchObject(onHold);
    await expect(f.recent.requireUnflagged('default', f.session.id, 'Changing the password')).rejects.toMatchObject({
      code: 'FORBIDDEN',
      message: expect.stringMatching(/^Changing the password is not possible from this session/),
    });
    f.session.clearFlag({}, null, ['pwd', 'otp']);
    await expect(f.recent.require('default', f.session.id, 'Adding a key')).resolves.toBeUndefined();
    await expect(f.recent.requireUnflagged('default', f.session.id, 'Changing the password')).resolves.toBeUndefined();
  });

  it('lets an unflagged session through requireUnflagged however old its sign-in', async () => {
    const f = fixture();
    f.clock.advance(24 * 3600);
    await expect(f.recent.requireUnflagged('default', f.session.id, 'Changing the password')).resolves.toBeUndefined();
    await expect(f.recent.requireUnflagged('default', crypto.randomUUID(), 'Changing the password')).rejects.toMatchObject({
      code: 'INVALID_TOKEN',
    });
  });

  it('answers INVALID_TOKEN for a session that does not exist or belongs to another realm', async () => {
    const f = fixture();
    await expect(f.recent.require('default', crypto.randomUUID(), 'Adding a key')).rejects.toMatchObject({ code: 'INVALID_TOKEN' });
    await expect(f.recent.require('master', f.session.id, 'Adding a key')).rejects.toMatchObject({ code: 'INVALID_TOKEN' });
  });
});
