import { ArgumentMetadata, Injectable, ValidationError, ValidationPipe } from '@nestjs/common';
import { DomainError, FieldError } from '../../domain/errors';
import { findReservedKey, RESERVED_KEY_MESSAGE } from '../../domain/user/app-metadata';

function flatten(errors: ValidationError[], parent = ''): FieldError[] {
  return errors.flatMap((error) => {
    const field = parent ? `${parent}.${error.property}` : error.property;
    // A field that is absent fails every rule it has; the one thing to say is that it is required.
    // (The value is read only for this test; it never reaches a message.)
    if ((error.value === undefined || error.value === null) && error.constraints) return [{ field, message: 'is required' }];
    const own = Object.values(error.constraints ?? {}).map((message) => ({
      field,
      // class-validator prefixes the property name; the envelope keeps it in `field`.
      message: message.startsWith(`${error.property} `) ? message.slice(error.property.length + 1) : message,
    }));
    return [...own, ...flatten(error.children ?? [], field)];
  });
}

/**
 * Whitelisting validation (unknown fields → 400, never stored) whose failures are
 * VALIDATION_FAILED with `details`.
 */
@Injectable()
export class AppValidationPipe extends ValidationPipe {
  constructor() {
    super({
      whitelist: true,
      forbidNonWhitelisted: true,
      transform: true,
      forbidUnknownValues: true,
      stopAtFirstError: true,
      validationError: { target: false, value: true },
      exceptionFactory: (errors) => {
        const details = flatten(errors);
        const first = details[0] ?? { field: 'body', message: 'is invalid' };
        const message = first.message.startsWith('property ') ? first.message : `${first.field} ${first.message}`;
        return new DomainError('VALIDATION_FAILED', message, { details });
      },
    });
  }

  override async transform(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    if (metadata.type === 'body' && metadata.metatype && metadata.metatype !== Object) {
      if (value === undefined || value === null || value === '') value = {};
      if (typeof value !== 'object' || Array.isArray(value)) {
        throw new DomainError('VALIDATION_FAILED', 'body must be a JSON object', {
          details: [{ field: 'body', message: 'must be a JSON object' }],
        });
      }
    }
    return super.transform(value, metadata);
  }

  /** The base class deletes these keys without a word; a request holding one is refused instead. */
  protected override stripProtoKeys(value: unknown): void {
    const reserved = findReservedKey(value, '');
    if (reserved) throw DomainError.validation(reserved, RESERVED_KEY_MESSAGE);
  }
}
