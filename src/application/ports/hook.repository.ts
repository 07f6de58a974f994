import { Hook, HookName } from '../../domain/hook/hook';

/** A realm's enabled hooks by name, as the sign-in paths read them. */
export type ActiveHooks = ReadonlyMap<HookName, Hook>;

/** The realms' synchronous hooks (at most one per name and realm). */
export abstract class HookRepository {
  /** The realm's hooks, in the order of their names. */
  abstract list(realmId: string): Promise<Hook[]>;
  /** The hook, its row locked until the caller's transaction ends; null when the realm has none of that name. */
  abstract findForUpdate(realmId: string, name: HookName): Promise<Hook | null>;
  /** Creates or replaces the hook. */
  abstract save(hook: Hook): Promise<void>;
  /** False when the realm had no hook of that name. */
  abstract delete(realmId: string, name: HookName): Promise<boolean>;
  /**
   * The realm's enabled hooks from a short-lived per-instance copy: synchronously while the copy
   * is fresh (a realm without hooks costs neither a statement nor a promise then), else a promise
   * of a fresh read. A change reaches every instance within 5 seconds.
   */
  abstract active(realmId: string): ActiveHooks | Promise<ActiveHooks>;
}
