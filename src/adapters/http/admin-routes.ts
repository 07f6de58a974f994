import { Injectable, OnApplicationBootstrap, RequestMethod } from '@nestjs/common';
import { METHOD_METADATA, PATH_METADATA } from '@nestjs/common/constants';
import { ModulesContainer } from '@nestjs/core';
import { adminActionRule, AdminActionName, isAdminAction } from '../../domain/admin/admin-policy';
import { ADMIN_ACTION } from './decorators';

export const ADMIN_PATH = '/v1/admin';

/** A route as the controllers declare it: `GET /v1/admin/users/:id`, and its admin action if any. */
export interface DeclaredRoute {
  method: string;
  path: string;
  action: string | undefined;
  /** An action declared on the whole controller: refused, since every handler there would inherit it. */
  controllerAction?: string;
}

function joinPath(...parts: unknown[]): string {
  const segments = parts.flatMap((part) => (typeof part === 'string' ? part.split('/') : [])).filter((segment) => segment.length > 0);
  return `/${segments.join('/')}`;
}

/** Every route of every controller of the app, from the decorators' metadata. */
export function declaredRoutes(modules: ModulesContainer): DeclaredRoute[] {
  const routes: DeclaredRoute[] = [];
  for (const module of modules.values()) {
    for (const wrapper of module.controllers.values()) {
      const controller = wrapper.metatype as { prototype: Record<string, unknown> } | null;
      if (!controller) continue;
      const base: unknown = Reflect.getMetadata(PATH_METADATA, controller);
      for (const key of Object.getOwnPropertyNames(controller.prototype)) {
        const handler = controller.prototype[key];
        if (key === 'constructor' || typeof handler !== 'function') continue;
        const method: RequestMethod | undefined = Reflect.getMetadata(METHOD_METADATA, handler);
        if (method === undefined) continue;
        routes.push({
          method: RequestMethod[method],
          path: joinPath(base, Reflect.getMetadata(PATH_METADATA, handler)),
          action: Reflect.getMetadata(ADMIN_ACTION, handler),
          controllerAction: Reflect.getMetadata(ADMIN_ACTION, controller),
        });
      }
    }
  }
  return routes;
}

const isAdminPath = (path: string) => path === ADMIN_PATH || path.startsWith(`${ADMIN_PATH}/`);

/**
 * What is wrong with the admin routes' declarations: a route under /v1/admin without an admin
 * action (it would run unguarded), an action on a controller (its handlers would inherit it,
 * whatever they do), elsewhere or unknown, or an action with a target on a route without the
 * `:id` that names it.
 */
export function adminRouteProblems(routes: DeclaredRoute[]): string[] {
  const problems: string[] = [];
  for (const { method, path, action, controllerAction } of routes) {
    const route = `${method} ${path}`;
    if (controllerAction !== undefined) {
      problems.push(`${route}: @AdminAction('${controllerAction}') is on its controller; declare it on each handler`);
    } else if (action === undefined) {
      if (isAdminPath(path)) problems.push(`${route} declares no @AdminAction`);
    } else if (!isAdminPath(path)) {
      problems.push(`${route} is not under ${ADMIN_PATH} but declares @AdminAction('${action}')`);
    } else if (!isAdminAction(action)) {
      problems.push(`${route} declares the unknown admin action '${action}'`);
    } else if (adminActionRule(action as AdminActionName).target && !path.split('/').includes(':id')) {
      problems.push(`${route}: '${action}' acts on the user or session its :id names, and the path has no :id`);
    }
  }
  return problems;
}

/** Refuses to start an app in which an admin route could run without the admin policy's decision. */
@Injectable()
export class AdminRoutesCheck implements OnApplicationBootstrap {
  constructor(private readonly modules: ModulesContainer) {}

  onApplicationBootstrap(): void {
    const problems = adminRouteProblems(declaredRoutes(this.modules));
    if (problems.length > 0) throw new Error(`Admin routes without the admin policy's decision:\n${problems.join('\n')}`);
  }
}
