import type { ApiErrorCode } from '../src/errors';
import type { DomainErrorCode } from '../../src/domain/errors';

// The client package cannot import the service's sources, so it spells the codes out; the type
// check (npm run typecheck, and this file's compilation) fails the moment the two lists differ.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const clientKnowsEveryCode: Same<ApiErrorCode, DomainErrorCode> = true;

it('the client SDK names exactly the error codes the service answers with', () => {
  expect(clientKnowsEveryCode).toBe(true);
});
