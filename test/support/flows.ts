import request from 'supertest';
import type { TestApp } from './test-app';

let counter = 0;

/** A unique email per call, so tests never collide. */
export function uniqueEmail(prefix = 'user'): string {
  counter += 1;
  return `${prefix}.${Date.now().toString(36)}.${counter}@example.com`;
}

export const PASSWORD = 'correct horse battery staple';

export async function register(t: TestApp, email = uniqueEmail(), password = PASSWORD, realm?: string) {
  const req = t.api().post('/api/v1/auth/register');
  if (realm) req.set('X-Realm-Id', realm);
  const res = await req.send({ email, password, name: 'Test User' });
  if (res.status !== 201) throw new Error(`register failed: ${res.status} ${JSON.stringify(res.body)}`);
  return { email, password, id: res.body.user.id as string };
}

export async function login(t: TestApp, email: string, password = PASSWORD, extra: Record<string, unknown> = {}, realm?: string) {
  const req = t.api().post('/api/v1/auth/login');
  if (realm) req.set('X-Realm-Id', realm);
  return req.send({ email, password, ...extra });
}

/** Registers and logs in; returns the tokens. */
export async function signedInUser(t: TestApp, realm?: string) {
  const user = await register(t, uniqueEmail(), PASSWORD, realm);
  const res = await login(t, user.email, PASSWORD, {}, realm);
  if (res.status !== 200) throw new Error(`login failed: ${res.status} ${JSON.stringify(res.body)}`);
  return {
    ...user,
    accessToken: res.body.tokens.accessToken as string,
    refreshToken: res.body.tokens.refreshToken as string,
  };
}

export function bearer(token: string): [string, string] {
  return ['Authorization', `Bearer ${token}`];
}

export type Agent = ReturnType<typeof request>;
