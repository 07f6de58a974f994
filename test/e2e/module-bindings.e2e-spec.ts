import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Controller, Delete, Get, Param } from '@nestjs/common';
import { ModulesContainer } from '@nestjs/core';
import { Test } from '@nestjs/testing';
import { AdminRoutesCheck, adminRouteProblems, declaredRoutes } from '../../src/adapters/http/admin-routes';
import { AdminAction } from '../../src/adapters/http/decorators';
import { AppModule } from '../../src/app.module';
import { createTestApp, TestApp } from '../support/test-app';

/**
 * The DI tokens of the ports: every exported abstract class of the port files, and every exported
 * symbol (a token for a collection). `ReadinessProbe` is the shape of the members of the
 * READINESS_PROBES collection, so the collection is the binding checked for it.
 */
function portTokens(): Map<unknown, string> {
  const folder = join(__dirname, '../../src/application/ports');
  const tokens = new Map<unknown, string>();
  for (const file of readdirSync(folder).filter((name) => name.endsWith('.ts'))) {
    const source = readFileSync(join(folder, file), 'utf8');
    const names = [...source.matchAll(/^export (?:abstract class (\w+)|const (\w+) = Symbol\()/gm)]
      .map((match) => match[1] ?? match[2])
      .filter((name) => name !== 'ReadinessProbe');
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const exported = require(join(folder, file)) as Record<string, unknown>;
    for (const name of names) tokens.set(exported[name], `${file}: ${name}`);
  }
  return tokens;
}

describe('the composition: feature modules', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  it('binds every port of the application exactly once, across all modules', () => {
    const modules = [...t.app.get(ModulesContainer).values()];
    const tokens = portTokens();
    expect(tokens.size).toBeGreaterThan(20);
    const bindings = [...tokens].map(([token, name]) => {
      const owners = modules.filter((module) => module.providers.has(token as never)).map((module) => module.name);
      return { port: name, owners };
    });
    expect(bindings.filter(({ owners }) => owners.length !== 1)).toEqual([]);
  });

  it('keeps AppModule to imports: no provider or controller of its own', () => {
    const appModule = [...t.app.get(ModulesContainer).values()].find((module) => module.metatype === AppModule);
    expect(appModule).toBeDefined();
    expect([...appModule!.controllers.keys()]).toEqual([]);
    // Nest adds the module class itself and its core helpers (ModuleRef, ApplicationConfig) to every module.
    const own = [...appModule!.providers.values()].filter(
      (wrapper) => wrapper.metatype && !wrapper.isAlias && wrapper.host === appModule && wrapper.metatype !== AppModule,
    );
    expect(own.map((wrapper) => wrapper.name).filter((name) => !['ModuleRef', 'ApplicationConfig'].includes(String(name)))).toEqual([]);
  });

  it('puts every /v1/admin route through the admin policy: each declares its admin action', () => {
    const routes = declaredRoutes(t.app.get(ModulesContainer));
    expect(routes.filter((route) => route.path.startsWith('/v1/admin/')).length).toBeGreaterThan(25);
    expect(routes.filter((route) => route.action !== undefined).every((route) => route.path.startsWith('/v1/admin/'))).toBe(true);
    expect(adminRouteProblems(routes)).toEqual([]);
  });

  it('refuses to start an app whose admin route lacks its own admin action, or whose target has no :id', async () => {
    @Controller('v1/admin/forgotten')
    class ForgottenController {
      @Get()
      list() {
        return [];
      }
    }
    @Controller('v1/admin/users')
    class MisnamedController {
      @AdminAction('user.delete')
      @Delete(':userId')
      remove(@Param('userId') id: string) {
        return id;
      }
    }
    @AdminAction('users.list')
    @Controller('v1/admin/users')
    class InheritingController {
      @Delete(':id')
      remove(@Param('id') id: string) {
        return id;
      }
    }
    for (const [controller, problem] of [
      [ForgottenController, 'GET /v1/admin/forgotten declares no @AdminAction'],
      [InheritingController, "DELETE /v1/admin/users/:id: @AdminAction('users.list') is on its controller"],
      [MisnamedController, "DELETE /v1/admin/users/:userId: 'user.delete' acts on the user or session its :id names"],
    ] as const) {
      const module = await Test.createTestingModule({ controllers: [controller], providers: [AdminRoutesCheck] }).compile();
      const app = module.createNestApplication({ logger: false });
      await expect(app.init()).rejects.toThrow(problem);
      await app.close();
    }
  });
});
