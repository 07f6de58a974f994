import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { ADMIN_ENV, adminApi, createUser, superAdmin } from '../../test/support/admin-flows';
import { bearer } from '../../test/support/flows';
import { createOrganization } from '../../test/support/organizations';
import { createTestApp, type TestApp } from '../../test/support/test-app';
import { createAccessTokenVerifier } from '../src/index';

/*
 * The active organization reaches a backend through the verifier, and the Express example of
 * docs/organizations.md (step 5) runs as written there.
 */

const DOC = join(__dirname, '../../docs/organizations.md');

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

function replaceOnce(code: string, from: string | RegExp, to: string): string {
  const matches = code.match(typeof from === 'string' ? new RegExp(from.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'), 'g') : from);
  if (matches?.length !== 1) throw new Error(`the example should contain ${String(from)} once`);
  return code.replace(from, to);
}

/** The example block as a function of `require`, serving on a free port. */
function docExample(issuer: string): (load: NodeJS.Require) => Server {
  const markdown = readFileSync(DOC, 'utf8');
  const marker = markdown.indexOf('<!-- example: express-organization-roles');
  if (marker < 0) throw new Error('docs/organizations.md has no express-organization-roles example');
  const block = /```js\n([\s\S]*?)```/.exec(markdown.slice(marker));
  if (!block) throw new Error('the example has no js block');
  let code = block[1];
  code = replaceOnce(code, "import express from 'express';", "const express = require('express');");
  code = replaceOnce(code, /import \{([^}]+)\} from '@identity-service\/verifier';/g, "const {$1} = require('../src/index');");
  code = replaceOnce(code, "'https://id.example.com/realms/default'", JSON.stringify(issuer));
  code = replaceOnce(code, 'app.listen(4000);', "return app.listen(0, '127.0.0.1');");
  return new Function('require', code) as (load: NodeJS.Require) => Server;
}

describe('the active organization through the verifier', () => {
  let t: TestApp;
  let issuer: string;
  let example: Server;
  let exampleUrl: string;

  beforeAll(async () => {
    const port = await freePort();
    issuer = `http://127.0.0.1:${port}/realms/default`;
    t = await createTestApp({ env: { ...ADMIN_ENV, API_URL: `http://127.0.0.1:${port}` } });
    await t.app.listen(port, '127.0.0.1');
    example = docExample(issuer)(require);
    await new Promise<void>((resolve) => (example.listening ? resolve() : example.once('listening', () => resolve())));
    exampleUrl = `http://127.0.0.1:${(example.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise<void>((resolve) => example.close(() => resolve()));
    await t.close();
  });

  it('surfaces org as organization, and the documented example admits only a billing member of the active organization', async () => {
    const root = await superAdmin(t);
    const admin = adminApi(t, root.accessToken, 'default');
    expect((await admin.post('/roles').send({ name: 'billing' })).status).toBe(201);
    const orgId = await createOrganization(t, root.accessToken, 'default', { name: 'Acme', slug: 'acme-verifier' });
    const billing = await createUser(t, root.accessToken, 'default');
    const other = await createUser(t, root.accessToken, 'default');
    await admin.put(`/organizations/${orgId}/members/${billing.id}`).send({ roles: ['billing'] });
    await admin.put(`/organizations/${orgId}/members/${other.id}`).send({ roles: [] });
    const choose = async (token: string) => {
      const res = await t
        .api()
        .post('/api/v1/auth/organizations/active')
        .set(...bearer(token))
        .send({ organizationId: orgId });
      expect(res.status).toBe(200);
      return res.body.tokens.accessToken as string;
    };
    const invoices = (token: string) => fetch(`${exampleUrl}/api/invoices`, { headers: { Authorization: `Bearer ${token}` } });

    const billingToken = await choose(billing.accessToken);
    const verified = await createAccessTokenVerifier({ issuer }).verify({
      authorization: `Bearer ${billingToken}`,
      method: 'GET',
      url: 'http://rs/x',
    });
    expect(verified.organization).toEqual({ id: orgId, slug: 'acme-verifier', roles: ['billing'] });

    const ok = await invoices(billingToken);
    expect(ok.status).toBe(200);
    expect(await ok.json()).toEqual({ organization: 'acme-verifier', invoices: [], scope: orgId });
    const withoutRole = await invoices(await choose(other.accessToken));
    expect([withoutRole.status, await withoutRole.json()]).toEqual([
      403,
      { error: 'insufficient_role', error_description: 'This requires the organization role "billing"' },
    ]);
    // Before choosing an organization: 403 too, saying why.
    const noOrganization = await invoices(billing.accessToken);
    expect(noOrganization.status).toBe(403);
    expect(((await noOrganization.json()) as { error_description: string }).error_description).toMatch(/active organization/);
  });
});
