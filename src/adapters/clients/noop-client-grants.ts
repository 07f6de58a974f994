import { Injectable } from '@nestjs/common';
import { ClientGrants } from '../../application/ports/client-grants';

/** Ends nothing: no OpenID provider has issued grants yet. The OpenID provider's module binds its own `ClientGrants`. */
@Injectable()
export class NoopClientGrants implements ClientGrants {
  async endAllForClient(): Promise<void> {}
}
