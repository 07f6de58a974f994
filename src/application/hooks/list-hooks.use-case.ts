import { Injectable } from '@nestjs/common';
import { Hook } from '../../domain/hook/hook';
import { HookRepository } from '../ports/hook.repository';

@Injectable()
export class ListHooksUseCase {
  constructor(private readonly hooks: HookRepository) {}

  /** The realm's hooks (their secrets are never shown again). */
  execute(input: { realmId: string }): Promise<Hook[]> {
    return this.hooks.list(input.realmId);
  }
}
