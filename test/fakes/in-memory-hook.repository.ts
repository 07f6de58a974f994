import { ActiveHooks, HookRepository } from '../../src/application/ports/hook.repository';
import { Hook, HOOK_NAMES, HookName } from '../../src/domain/hook/hook';

const copy = (hook: Hook) => Hook.restore(hook.snapshot());

/** The realms' hooks in a map; `active` reads them as they are now (no copy to go stale). */
export class InMemoryHookRepository extends HookRepository {
  readonly rows = new Map<string, Hook>();

  async list(realmId: string): Promise<Hook[]> {
    return [...this.rows.values()]
      .filter((h) => h.realmId === realmId)
      .sort((a, b) => HOOK_NAMES.indexOf(a.name) - HOOK_NAMES.indexOf(b.name))
      .map(copy);
  }

  /** No concurrency here: the row lock is the database's business. */
  async findForUpdate(realmId: string, name: HookName): Promise<Hook | null> {
    const found = this.rows.get(`${realmId}/${name}`);
    return found ? copy(found) : null;
  }

  async save(hook: Hook): Promise<void> {
    this.rows.set(`${hook.realmId}/${hook.name}`, copy(hook));
  }

  async delete(realmId: string, name: HookName): Promise<boolean> {
    return this.rows.delete(`${realmId}/${name}`);
  }

  active(realmId: string): ActiveHooks {
    return new Map([...this.rows.values()].filter((h) => h.realmId === realmId && h.enabled).map((h) => [h.name, copy(h)]));
  }
}
