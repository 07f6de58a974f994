import { SetMetadata } from '@nestjs/common';
import { DomainErrorCode } from '../../../domain/errors';

export const API_ERRORS = 'app:api-errors';

/**
 * The error codes a route answers beyond those every route of its kind shares (which the
 * OpenAPI document derives from @Public, @RealmHeader, @AdminAction and the method: token,
 * realm, body, rate-limit and availability errors). On a controller or a handler; both add up.
 */
export const ApiErrors = (...codes: DomainErrorCode[]) => SetMetadata(API_ERRORS, codes);
