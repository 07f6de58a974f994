import { Injectable } from '@nestjs/common';
import { Client } from '../../domain/client/client';
import { ClientRepository } from '../ports/client.repository';
import { findClient } from './client-admin';

@Injectable()
export class ListClientsUseCase {
  constructor(private readonly clients: ClientRepository) {}

  /**
   * The realm's clients, oldest first, or the one `clientId` names.
   * @throws DomainError CLIENT_NOT_FOUND for an unknown client id
   */
  async execute(input: { realmId: string; clientId?: string }): Promise<Client[]> {
    if (input.clientId !== undefined) return [await findClient(this.clients, input.realmId, input.clientId)];
    return this.clients.list(input.realmId);
  }
}
