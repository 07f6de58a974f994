import { DeferredWork } from '../../src/adapters/http/deferred-work';
import type { TestApp } from './test-app';
import { bearer, login, PASSWORD, uniqueEmail } from './flows';

/** The bootstrap super-admin every admin test app starts with (realm master). */
export const ROOT_EMAIL = 'root@example.com';
export const ROOT_PASSWORD = 'root password for the tests';
export const ADMIN_ENV: Record<string, string> = { BOOTSTRAP_ADMIN_EMAIL: ROOT_EMAIL, BOOTSTRAP_ADMIN_PASSWORD: ROOT_PASSWORD };

export interface SignedIn {
  id: string;
  email: string;
  accessToken: string;
  refreshToken: string;
}

async function signIn(t: TestApp, email: string, password: string, realm: string): Promise<SignedIn> {
  const res = await login(t, email, password, {}, realm);
  if (res.status !== 200) throw new Error(`login failed: ${res.status} ${JSON.stringify(res.body)}`);
  return { id: res.body.user.id, email, accessToken: res.body.tokens.accessToken, refreshToken: res.body.tokens.refreshToken };
}

/** Signs the bootstrap super-admin in (realm master). */
export function superAdmin(t: TestApp): Promise<SignedIn> {
  return signIn(t, ROOT_EMAIL, ROOT_PASSWORD, 'master');
}

/** An admin request: bearer token and X-Realm-Id. */
export function adminApi(t: TestApp, token: string, realm: string) {
  const headers = (r: ReturnType<ReturnType<TestApp['api']>['get']>) => r.set(...bearer(token)).set('X-Realm-Id', realm);
  return {
    get: (path: string) => headers(t.api().get(`/v1/admin${path}`)),
    post: (path: string) => headers(t.api().post(`/v1/admin${path}`)),
    put: (path: string) => headers(t.api().put(`/v1/admin${path}`)),
    patch: (path: string) => headers(t.api().patch(`/v1/admin${path}`)),
    delete: (path: string) => headers(t.api().delete(`/v1/admin${path}`)),
  };
}

/** Creates a user through the admin API (as `token`) with a password, and signs it in. */
export async function createUser(
  t: TestApp,
  token: string,
  realm: string,
  extra: { roles?: string[]; email?: string; name?: string; emailVerified?: boolean } = {},
): Promise<SignedIn> {
  const email = extra.email ?? uniqueEmail('member');
  const res = await adminApi(t, token, realm)
    .post('/users')
    .send({
      email,
      name: extra.name ?? 'Member User',
      password: PASSWORD,
      ...(extra.roles ? { roles: extra.roles } : {}),
      ...(extra.emailVerified !== undefined ? { emailVerified: extra.emailVerified } : {}),
    });
  if (res.status !== 201) throw new Error(`create user failed: ${res.status} ${JSON.stringify(res.body)}`);
  return signIn(t, email, PASSWORD, realm);
}

/** Creates a realm through the admin API as the super-admin. */
export async function createRealm(t: TestApp, rootToken: string, id: string, name = `Realm ${id}`): Promise<void> {
  const res = await adminApi(t, rootToken, 'master').post('/realms').send({ id, name });
  if (res.status !== 201) throw new Error(`create realm failed: ${res.status} ${JSON.stringify(res.body)}`);
}

/** Audit events of a realm as stored, oldest first. */
export async function storedEvents(t: TestApp, realm: string, where: { userId?: string; type?: string } = {}) {
  const rows: {
    type: string;
    user_id: string | null;
    actor_id: string | null;
    session_id: string | null;
    details: Record<string, unknown>;
  }[] = await t.dataSource.query(
    `SELECT type, user_id, actor_id, session_id, details FROM audit_events
       WHERE realm_id = $1 AND ($2::uuid IS NULL OR user_id = $2::uuid) AND ($3::text IS NULL OR type = $3::text) ORDER BY at, id`,
    [realm, where.userId ?? null, where.type ?? null],
  );
  return rows;
}

/** The text of the newest email queued for `email`, once the work done after answering has run; '' when none. */
export async function lastQueuedMailText(t: TestApp, email: string): Promise<string> {
  await t.app.get(DeferredWork).settled();
  const rows: { text_body: string }[] = await t.dataSource.query(
    `SELECT text_body FROM email_outbox WHERE recipient = $1 ORDER BY created_at DESC LIMIT 1`,
    [email],
  );
  return rows[0]?.text_body ?? '';
}
