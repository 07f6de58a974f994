import { combineWrites } from '../../../src/adapters/persistence/typeorm-transaction';

describe('combineWrites (the statement of a Transaction.batch)', () => {
  it('sends nothing for no writes and one write as it is', () => {
    expect(combineWrites([])).toBeNull();
    const one = { text: 'UPDATE users SET status = $2 WHERE id = $1', params: ['u', 'active'] };
    expect(combineWrites([one])).toBe(one);
  });

  it('makes data-modifying CTEs, shifting each write past the parameters before it ($1 and $10 alike)', () => {
    const tenParams = Array.from({ length: 10 }, (_, i) => `p${i + 1}`);
    const combined = combineWrites([
      { text: 'UPDATE users SET a = $2 WHERE id = $1', params: ['id', 'a'] },
      { text: `INSERT INTO t (a, b, c, d, e, f, g, h, i, j) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`, params: tenParams },
      { text: 'INSERT INTO audit_events (id, details) VALUES ($1, $2::jsonb)', params: ['e', '{}'] },
    ]);
    expect(combined).toEqual({
      text:
        'WITH w0 AS (UPDATE users SET a = $2 WHERE id = $1), ' +
        'w1 AS (INSERT INTO t (a, b, c, d, e, f, g, h, i, j) VALUES ($3, $4, $5, $6, $7, $8, $9, $10, $11, $12)), ' +
        'w2 AS (INSERT INTO audit_events (id, details) VALUES ($13, $14::jsonb)) SELECT 1',
      params: ['id', 'a', ...tenParams, 'e', '{}'],
    });
  });

  it('refuses a placeholder beyond its own write parameters, which would read another write', () => {
    const writes = [
      { text: 'DELETE FROM t WHERE id = $1', params: ['x'] },
      { text: 'DELETE FROM t WHERE id = $2', params: ['y'] },
    ];
    expect(() => combineWrites(writes)).toThrow(/placeholder \$2 of a batched write that has 1 parameters/);
  });
});
