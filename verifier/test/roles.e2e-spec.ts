import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { ADMIN_ENV, adminApi, createUser, superAdmin, type SignedIn } from '../../test/support/admin-flows';
import { login, PASSWORD } from '../../test/support/flows';
import { createTestApp, type TestApp } from '../../test/support/test-app';
import { createAccessTokenVerifier, type AccessTokenVerifier } from '../src/index';

/*
 * Roles and app metadata from the real service reach a backend through the verifier, and the
 * Express example of docs/resource-servers.md ("Authorising by role") runs as written there.
 */

const DOC = join(__dirname, '../../docs/resource-servers.md');

/** A port nothing listens on (taken, then released). */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** Replaces `from` once, failing when the document no longer says it (so the test follows the docs). */
function replaceOnce(code: string, from: string | RegExp, to: string): string {
  const matches = code.match(typeof from === 'string' ? new RegExp(from.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'), 'g') : from);
  if (matches?.length !== 1) throw new Error(`the example should contain ${String(from)} once`);
  return code.replace(from, to);
}

/**
 * The example block as a function of `require`: its ES imports become requires (the package is
 * its source here), its issuer the test service, and `app.listen(4000)` a listen on a free port
 * whose server is returned.
 */
function docExample(issuer: string): (load: NodeJS.Require) => Server {
  const markdown = readFileSync(DOC, 'utf8');
  const marker = markdown.indexOf('<!-- example: express-roles');
  if (marker < 0) throw new Error('docs/resource-servers.md has no express-roles example');
  const block = /```js\n([\s\S]*?)```/.exec(markdown.slice(marker));
  if (!block) throw new Error('the express-roles example has no js block');
  let code = block[1];
  code = replaceOnce(code, "import express from 'express';", "const express = require('express');");
  code = replaceOnce(code, /import \{([^}]+)\} from '@identity-service\/verifier';/g, "const {$1} = require('../src/index');");
  code = replaceOnce(code, "'https://id.example.com/realms/default'", JSON.stringify(issuer));
  code = replaceOnce(code, 'app.listen(4000);', "return app.listen(0, '127.0.0.1');");
  return new Function('require', code) as (load: NodeJS.Require) => Server;
}

describe('roles and app metadata through the verifier', () => {
  let t: TestApp;
  let issuer: string;
  let verifier: AccessTokenVerifier;
  let example: Server;
  let exampleUrl: string;
  let admin: ReturnType<typeof adminApi>;
  let teacher: SignedIn;
  let pupil: SignedIn;

  /** Signs in again, so the token carries what the administrator set since. */
  async function fresh(user: SignedIn): Promise<string> {
    const res = await login(t, user.email, PASSWORD);
    expect(res.status).toBe(200);
    return res.body.tokens.accessToken as string;
  }

  const grades = (token?: string) => fetch(`${exampleUrl}/api/grades`, { headers: token ? { Authorization: `Bearer ${token}` } : {} });

  beforeAll(async () => {
    const port = await freePort();
    issuer = `http://127.0.0.1:${port}/realms/default`;
    t = await createTestApp({ env: { ...ADMIN_ENV, API_URL: `http://127.0.0.1:${port}` } });
    await t.app.listen(port, '127.0.0.1');
    verifier = createAccessTokenVerifier({ issuer });
    const root = await superAdmin(t);
    admin = adminApi(t, root.accessToken, 'default');
    expect((await admin.post('/roles').send({ name: 'teacher' })).status).toBe(201);
    teacher = await createUser(t, root.accessToken, 'default', { roles: ['teacher'] });
    pupil = await createUser(t, root.accessToken, 'default');
    expect((await admin.put(`/users/${teacher.id}/app-metadata`).send({ appMetadata: { schoolId: 'north-42' } })).status).toBe(200);
    example = docExample(issuer)(require);
    await new Promise<void>((resolve) => (example.listening ? resolve() : example.once('listening', () => resolve())));
    exampleUrl = `http://127.0.0.1:${(example.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise<void>((resolve) => example.close(() => resolve()));
    await t.close();
  });

  it('surfaces the roles and the app metadata of the token; {} when there is none', async () => {
    const teacherToken = await verifier.verify({ authorization: `Bearer ${await fresh(teacher)}`, method: 'GET', url: 'http://rs/x' });
    expect(teacherToken).toMatchObject({ sub: teacher.id, roles: ['teacher'], appMetadata: { schoolId: 'north-42' } });
    const pupilToken = await verifier.verify({ authorization: `Bearer ${await fresh(pupil)}`, method: 'GET', url: 'http://rs/x' });
    expect(pupilToken).toMatchObject({ sub: pupil.id, roles: [], appMetadata: {} });
  });

  it('runs the documented Express example: a teacher passes, anyone else gets 403, no token 401', async () => {
    const ok = await grades(await fresh(teacher));
    expect(ok.status).toBe(200);
    expect(await ok.json()).toEqual({ teacher: teacher.id, school: 'north-42' });
    const refused = await grades(await fresh(pupil));
    expect(refused.status).toBe(403);
    expect(await refused.json()).toEqual({ error: 'insufficient_role', error_description: 'This requires the role "teacher"' });
    expect((await grades()).status).toBe(401);
  });

  it('follows the administrator at the next token: a role given passes, a role deleted no longer does', async () => {
    const before = await fresh(pupil);
    expect((await admin.put(`/users/${pupil.id}/roles`).send({ roles: ['teacher'] })).status).toBe(200);
    // The token in hand still says what was true when it was issued.
    expect((await grades(before)).status).toBe(403);
    const granted = await fresh(pupil);
    expect((await grades(granted)).status).toBe(200);
    expect((await admin.delete('/roles/teacher')).status).toBe(200);
    expect((await grades(await fresh(pupil))).status).toBe(403);
    expect((await grades(await fresh(teacher))).status).toBe(403);
  });
});
