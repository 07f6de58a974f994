import { Hook } from '../../domain/hook/hook';

/** The HTTP shape of a hook, whitelisted field by field: never its secret. */
export function presentHook(hook: Hook) {
  return {
    name: hook.name,
    url: hook.url,
    enabled: hook.enabled,
    timeoutMs: hook.timeoutMs,
    failure: hook.failure,
    createdAt: hook.createdAt.toISOString(),
    updatedAt: hook.updatedAt.toISOString(),
  };
}
