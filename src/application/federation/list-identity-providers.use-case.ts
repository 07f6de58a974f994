import { Injectable } from '@nestjs/common';
import { IdentityProvider } from '../../domain/federation/identity-provider';
import { IdentityProviderRepository } from '../ports/identity-provider.repository';
import { findProvider } from './identity-provider-admin';

@Injectable()
export class ListIdentityProvidersUseCase {
  constructor(private readonly providers: IdentityProviderRepository) {}

  /**
   * The realm's providers, or the one named `alias`; `enabledOnly` for sign-in buttons.
   * @throws DomainError IDENTITY_PROVIDER_NOT_FOUND for an unknown alias
   */
  async execute(input: { realmId: string; alias?: string; enabledOnly?: boolean }): Promise<IdentityProvider[]> {
    if (input.alias !== undefined) return [await findProvider(this.providers, input.realmId, input.alias)];
    const all = await this.providers.list(input.realmId);
    return input.enabledOnly ? all.filter((p) => p.enabled) : all;
  }
}
