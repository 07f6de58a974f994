import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import type { ApiErrorCode } from '../src/errors';
import type { DomainErrorCode } from '../../src/domain/errors';
import { ERROR_STATUS } from '../../src/adapters/http/errors/error-status';

// The client package cannot import the service's sources, so it spells the codes out. Jest
// compiles without type checking, so the lists are compared here as the compiler reads them.
// The type below also fails `npm run typecheck` the moment they differ.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
export const clientKnowsEveryCode: Same<ApiErrorCode, DomainErrorCode> = true;

/** The string literals of the union `typeName` exported by `file`. */
function codesOf(file: string, typeName: string): string[] {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.ES2022, true);
  const alias = source.statements.find((s): s is ts.TypeAliasDeclaration => ts.isTypeAliasDeclaration(s) && s.name.text === typeName);
  if (!alias || !ts.isUnionTypeNode(alias.type)) throw new Error(`${typeName} is not a union type in ${file}`);
  return alias.type.types.map((member) => {
    if (!ts.isLiteralTypeNode(member) || !ts.isStringLiteral(member.literal))
      throw new Error(`${typeName} has a member that is not a string literal`);
    return member.literal.text;
  });
}

const root = join(__dirname, '..', '..');

it('the client SDK names exactly the error codes the service answers with', () => {
  const client = codesOf(join(root, 'client/src/errors.ts'), 'ApiErrorCode');
  const service = codesOf(join(root, 'src/domain/errors.ts'), 'DomainErrorCode');
  expect(client.length).toBeGreaterThan(10);
  expect(new Set(client).size).toBe(client.length);
  expect([...client].sort()).toEqual([...service].sort());
  // And the service's codes are those its HTTP layer answers with.
  expect([...service].sort()).toEqual(Object.keys(ERROR_STATUS).sort());
});
