import { DomainError } from '../../domain/errors';
import { HookName, isHookName } from '../../domain/hook/hook';

/**
 * The hook `name` of a route: one of the three, else NOT_FOUND (there is nothing else to find).
 * @throws DomainError NOT_FOUND
 */
export function hookNamed(name: string): HookName {
  if (!isHookName(name)) throw new DomainError('NOT_FOUND', 'No such hook');
  return name;
}
