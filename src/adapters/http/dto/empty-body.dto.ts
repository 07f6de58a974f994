import { IsEmpty, IsOptional } from 'class-validator';

/**
 * The body of actions that take none (activate, unlock …): any field sent is rejected as
 * unknown. One optional, always-empty property gives the class validation
 * metadata, which `forbidUnknownValues` requires.
 */
export class EmptyBodyDto {
  @IsOptional()
  @IsEmpty()
  readonly _?: never;
}
