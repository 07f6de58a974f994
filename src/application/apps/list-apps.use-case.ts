import { Injectable } from '@nestjs/common';
import { OpClients } from '../ports/op-clients';
import { OpGrants } from '../ports/op-grants';

export interface AppView {
  clientId: string;
  name: string;
  scopes: string[];
  grantedAt: Date;
  lastUsedAt: Date | null;
}

/** The apps a user let sign them in through the realm's OpenID provider (`GET /apps`). */
@Injectable()
export class ListAppsUseCase {
  constructor(
    private readonly grants: OpGrants,
    private readonly clients: OpClients,
  ) {}

  async execute(input: { realmId: string; userId: string }): Promise<AppView[]> {
    const grants = await this.grants.listForUser(input.realmId, input.userId);
    const apps: AppView[] = [];
    for (const grant of grants) {
      const client = await this.clients.find(input.realmId, grant.clientId);
      // A client deleted since: its grant is worth nothing, and not shown.
      if (client) apps.push({ ...grant, name: client.name });
    }
    return apps;
  }
}
