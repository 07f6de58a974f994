import { adminApi, lastQueuedMailText } from './admin-flows';
import { bearer } from './flows';
import type { TestApp } from './test-app';

/** The token of the newest link to `path` emailed to `email`. */
export async function mailedToken(t: TestApp, email: string, path: '/account/invitation' | '/verify-email'): Promise<string> {
  const text = await lastQueuedMailText(t, email);
  const match = new RegExp(`${path.replace(/\//g, '\\/')}\\?token=([^&\\s]+)`).exec(text);
  if (!match) throw new Error(`no ${path} link in the last email to ${email}: ${text}`);
  return decodeURIComponent(match[1]);
}

/** Verifies the address of an account registered with it, through the emailed link. */
export async function verifyAddress(t: TestApp, email: string, realm = 'default'): Promise<void> {
  const token = await mailedToken(t, email, '/verify-email');
  const res = await t.api().post('/api/v1/auth/verify-email').set('X-Realm-Id', realm).send({ token });
  if (res.status !== 200) throw new Error(`verify failed: ${res.status} ${JSON.stringify(res.body)}`);
}

/** Creates an organization through the admin API; returns its id. */
export async function createOrganization(t: TestApp, adminToken: string, realm: string, body: Record<string, unknown>): Promise<string> {
  const res = await adminApi(t, adminToken, realm).post('/organizations').send(body);
  if (res.status !== 201) throw new Error(`create organization failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.organization.id as string;
}

/** A request to the members' own organization routes, as `token`. */
export function orgApi(t: TestApp, token: string, realm = 'default') {
  const headers = (r: ReturnType<ReturnType<TestApp['api']>['get']>) => r.set(...bearer(token)).set('X-Realm-Id', realm);
  const base = '/api/v1/auth/organizations';
  return {
    get: (path: string) => headers(t.api().get(`${base}${path}`)),
    post: (path: string) => headers(t.api().post(`${base}${path}`)),
    put: (path: string) => headers(t.api().put(`${base}${path}`)),
    delete: (path: string) => headers(t.api().delete(`${base}${path}`)),
  };
}
