/** The SQLSTATE of a driver error wrapped by TypeORM (pg and PGlite both expose `code`). */
export function sqlState(error: unknown): string | undefined {
  const candidate = error as { code?: unknown; driverError?: { code?: unknown } };
  const code = candidate?.driverError?.code ?? candidate?.code;
  return typeof code === 'string' ? code : undefined;
}

export const UNIQUE_VIOLATION = '23505';
/** A statement cancelled, here by its `statement_timeout`. */
export const QUERY_CANCELED = '57014';
