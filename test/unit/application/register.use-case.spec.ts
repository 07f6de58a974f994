import { authFixture } from './auth-fixture';

describe('RegisterUseCase', () => {
  it('creates the user and queues a verification email with a single-use link token stored only as a hash', async () => {
    const f = authFixture();
    const user = await f.register.execute({
      realm: f.realm,
      email: 'Ada@Example.com',
      password: 'correct horse battery staple',
      name: 'Ada Lovelace',
      ip: '198.51.100.1',
    });
    expect(user.email).toBe('ada@example.com');
    expect(f.mailer.sent).toHaveLength(1);
    const link = /verify-email\?token=([A-Za-z0-9_-]+)/.exec(f.mailer.sent[0].text)?.[1];
    expect(link).toBeDefined();
    const [stored] = [...f.oneTimeTokens.rows.values()];
    expect(stored).toMatchObject({ kind: 'email_verification', userId: user.id, email: 'ada@example.com' });
    expect(stored.tokenHash).not.toBe(link);
    expect(stored.expiresAt.getTime() - f.clock.now().getTime()).toBe(24 * 3600 * 1000);
    expect(f.audit.types()).toEqual(['user.registered']);
  });

  it('refuses a second registration of the same address', async () => {
    const f = authFixture();
    const input = { realm: f.realm, email: 'ada@example.com', password: 'correct horse battery staple', name: 'Ada', ip: '198.51.100.1' };
    await f.register.execute(input);
    await expect(f.register.execute({ ...input, email: ' ADA@example.com' })).rejects.toMatchObject({ code: 'EMAIL_ALREADY_REGISTERED' });
    expect(f.userRepo.all()).toHaveLength(1);
  });

  it('refuses a common password before storing anything', async () => {
    const f = authFixture();
    await expect(
      f.register.execute({ realm: f.realm, email: 'ada@example.com', password: 'password1234', name: 'Ada', ip: '198.51.100.1' }),
    ).rejects.toMatchObject({ code: 'VALIDATION_FAILED' });
    expect(f.userRepo.all()).toHaveLength(0);
    expect(f.mailer.sent).toHaveLength(0);
  });
});
