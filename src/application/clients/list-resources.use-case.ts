import { Injectable } from '@nestjs/common';
import { Resource } from '../../domain/client/resource';
import { ResourceRepository } from '../ports/resource.repository';

@Injectable()
export class ListResourcesUseCase {
  constructor(private readonly resources: ResourceRepository) {}

  /** The realm's resources, oldest first. */
  execute(input: { realmId: string }): Promise<Resource[]> {
    return this.resources.list(input.realmId);
  }
}
